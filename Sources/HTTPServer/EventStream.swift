import Foundation

/// One open Server-Sent Events response: the bytes written to it wait in a bounded buffer until
/// the page's connection thread sends them.
///
/// A page that stops reading fills its buffer; the next write past the bound drops the stream
/// (its connection is closed), so a slow page costs at most `capacity` bytes and never slows the
/// writer or the other pages. An `EventSource` reconnects by itself with `Last-Event-ID`.
public final class EventStream: @unchecked Sendable {
    // @unchecked: every mutable field is touched only under `condition`'s lock.
    private let condition = NSCondition()
    private var buffer: [UInt8] = []
    private var ended = false
    /// The most bytes kept for the page.
    public let capacity: Int
    /// The seq the page said it had (`Last-Event-ID`), if any.
    public let lastEventID: String?
    /// How long a reader waits with nothing to send before sending a comment (a keep-alive that
    /// also finds pages that are gone).
    let keepAlive: Duration

    init(capacity: Int, lastEventID: String?, keepAlive: Duration) {
        self.capacity = capacity
        self.lastEventID = lastEventID
        self.keepAlive = keepAlive
    }

    /// Queues `bytes` for the page; false when the stream is ended, or is dropped now because
    /// the page has not read what it was sent before.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !ended else { return false }
        guard buffer.count + bytes.count <= capacity else {
            ended = true
            buffer = []
            condition.broadcast()
            return false
        }
        buffer += bytes
        condition.signal()
        return true
    }

    /// Ends the stream; the page's connection closes once what was queued is sent.
    public func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the stream has ended (closed by the server, dropped, or the page went away).
    public var isEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    /// The bytes held for the page now (for measuring the bound).
    public var bufferedBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return buffer.count
    }

    /// Waits for bytes (at most `keepAlive`) and moves up to `maximum` of them into `into`;
    /// returns how many, or nil once the stream has ended and everything was sent.
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        if buffer.isEmpty, !ended {
            let seconds =
                Double(keepAlive.components.seconds) + Double(keepAlive.components.attoseconds) / 1e18
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
        if buffer.isEmpty {
            if ended { return nil }
            buffer = Array(":\n\n".utf8)
        }
        let count = min(maximum, buffer.count)
        buffer.withUnsafeBytes { raw in
            UnsafeMutableRawPointer(destination).copyMemory(from: raw.baseAddress!, byteCount: count)
        }
        buffer.removeFirst(count)
        return count
    }
}
