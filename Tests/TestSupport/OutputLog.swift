import Foundation

/// What a child process wrote to one stream: read off a pipe on a thread of its own (each line
/// stamped with when it arrived), or from the file the stream was sent to.
public final class OutputLog: @unchecked Sendable {
    // @unchecked: every stored `var` is only touched under `lock`.

    /// One line, stamped with when it was read (for a file: when it was looked at).
    public struct Line: Sendable {
        public var at: ContinuousClock.Instant
        public var text: String
    }

    private let lock = NSLock()
    private let file: String?
    private var stored: [Line] = []
    private var partial = Data()
    private var all = Data()
    private var closed = false
    private let done = DispatchSemaphore(value: 0)

    /// A log fed by ``append(_:)`` and ``close()``.
    init() { file = nil }

    /// A log read from `file` (the stream was sent there); closed when the process exits.
    init(file: String) { self.file = file }

    /// The file the stream goes to, if it goes to one.
    public var path: String? { file }

    func append(_ data: Data) {
        let now = ContinuousClock.now
        lock.withLock {
            all.append(data)
            partial.append(data)
            while let newline = partial.firstIndex(of: 0x0A) {
                let text = String(decoding: partial[partial.startIndex..<newline], as: UTF8.self)
                stored.append(Line(at: now, text: text))
                partial.removeSubrange(partial.startIndex...newline)
            }
        }
    }

    func close() {
        lock.withLock {
            if !partial.isEmpty {
                stored.append(Line(at: .now, text: String(decoding: partial, as: UTF8.self)))
            }
            partial.removeAll()
            closed = true
        }
        done.signal()
    }

    /// Everything written so far.
    public var text: String {
        if let file { return (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
        return lock.withLock { String(decoding: all, as: UTF8.self) }
    }

    /// Every byte written so far, as written (``text`` decodes them, which would hide a byte
    /// that is not UTF-8).
    public var bytes: Data {
        if let file { return FileManager.default.contents(atPath: file) ?? Data() }
        return lock.withLock { all }
    }

    /// The complete lines so far (and the last, unterminated one once the stream has closed).
    public var lines: [Line] {
        if file != nil {
            let now = ContinuousClock.now
            return text.split(separator: "\n").map { Line(at: now, text: String($0)) }
        }
        return lock.withLock { stored }
    }

    /// ``text`` split at newlines, empty lines kept (the last is "" after a final newline).
    public var textLines: [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Whether the writer has closed the stream and every byte has been read.
    public var isClosed: Bool { lock.withLock { closed } }

    /// Waits up to `limit` times ``testSlowdown`` for the end of the stream (a grandchild may hold
    /// a pipe open after its parent exits: then this returns what has come so far); the whole text.
    @discardableResult
    public func waitForEnd(within limit: Duration = .seconds(5)) -> String {
        if file == nil, !isClosed,
            done.wait(timeout: .now() + (limit * testSlowdown).timeInterval) == .success
        {
            done.signal()  // keep it signalled for the next wait
        }
        return text
    }

    /// The first line from index `from` on that satisfies `predicate`, waiting up to `timeout`
    /// times ``testSlowdown`` (nil when none came, or the stream closed without one).
    public func waitFor(
        from: Int = 0, timeout: Duration, _ predicate: (String) -> Bool
    ) -> (index: Int, line: Line)? {
        let deadline = ContinuousClock.now + timeout * testSlowdown
        while true {
            let closedBefore = isClosed
            let snapshot = lines
            if from < snapshot.count {
                for index in from..<snapshot.count where predicate(snapshot[index].text) {
                    return (index, snapshot[index])
                }
            }
            if ContinuousClock.now >= deadline || closedBefore { return nil }
            sleep(for: .milliseconds(20))
        }
    }
}
