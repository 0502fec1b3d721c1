import CMicroHTTPD
@preconcurrency import Glibc
import SystemSupport

/// One open Server-Sent Events response: the bytes written to it wait in a bounded queue until
/// the server's event loop sends them. While nothing is queued the page's connection is
/// suspended (it costs no thread and no polling); a write resumes it.
///
/// A page that stops reading fills its queue; the next write past the bound drops the stream
/// (its connection is closed), so a slow page costs at most `capacity` bytes beyond its largest
/// queued message (a snapshot may be larger than the bound and still reach a page that reads),
/// and never slows the writer or the other pages. Messages are kept as the writer's arrays, so
/// one snapshot sent to many pages is stored once. An `EventSource` reconnects by itself with
/// `Last-Event-ID`.
public final class EventStream: Sendable {
    /// The most bytes kept for the page beyond its largest queued message.
    public let capacity: Int
    /// The seq the page said it had (`Last-Event-ID`), if any.
    public let lastEventID: String?
    private let state: Locked<State>

    private struct State {
        /// Messages not yet sent in whole, oldest first; `headOffset` bytes of the first are sent.
        var chunks: [[UInt8]] = []
        var headOffset = 0
        var queuedBytes = 0
        /// The size of the largest queued message, and how many queued messages have it.
        var largest = 0
        var largestCount = 0
        var ended = false
        /// The page's connection while it is open; nil once the server let it go.
        var connection: OpaquePointer?
        /// Its socket, valid while `connection` is suspended (a suspended connection is never
        /// closed by the server but through ``EventStream/end()`` or a write).
        var socket: Int32 = -1
        var suspended = false
        var lastWrite = ContinuousClock.now
    }

    init(capacity: Int, lastEventID: String?, connection: OpaquePointer?, socket: Int32) {
        self.capacity = capacity
        self.lastEventID = lastEventID
        state = Locked(State(connection: connection, socket: socket))
    }

    /// Queues `bytes` for the page; false when the stream is ended, or is dropped now because
    /// the page has not read what it was sent before.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            guard !bytes.isEmpty else { return true }
            guard state.queuedBytes + bytes.count - max(state.largest, bytes.count) <= capacity else {
                Self.drop(&state)
                return false
            }
            Self.append(bytes, to: &state)
            state.lastWrite = .now
            Self.resume(&state)
            return true
        }
    }

    /// Ends the stream; the page's connection closes once what was queued is sent.
    public func end() {
        state.withLock { state in
            state.ended = true
            Self.resume(&state)
        }
    }

    /// Whether the stream has ended (closed by the server, dropped, or the page went away).
    public var isEnded: Bool { state.withLock { $0.ended } }

    /// The bytes held for the page now (for measuring the bound).
    public var bufferedBytes: Int { state.withLock { $0.queuedBytes } }

    private static func append(_ bytes: [UInt8], to state: inout State) {
        state.chunks.append(bytes)
        state.queuedBytes += bytes.count
        if bytes.count > state.largest {
            state.largest = bytes.count
            state.largestCount = 1
        } else if bytes.count == state.largest {
            state.largestCount += 1
        }
    }

    private static func removeHead(from state: inout State) {
        let removed = state.chunks.removeFirst().count
        state.headOffset = 0
        guard removed == state.largest else { return }
        state.largestCount -= 1
        if state.largestCount == 0 {
            state.largest = state.chunks.map(\.count).max() ?? 0
            state.largestCount = state.chunks.count { $0.count == state.largest }
        }
    }

    private static func drop(_ state: inout State) {
        state.ended = true
        state.chunks = []
        state.queuedBytes = 0
        state.largest = 0
        state.largestCount = 0
        resume(&state)
    }

    private static func resume(_ state: inout State) {
        guard state.suspended, let connection = state.connection else { return }
        state.suspended = false
        MHD_resume_connection(connection)
    }

    /// The content reader (on the server's thread): moves up to `maximum` queued bytes into
    /// `destination` and returns how many; with nothing queued it suspends the connection and
    /// returns 0 (a reader that returned 0 unsuspended would be called again at once); nil once
    /// the stream has ended and everything was sent.
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int? {
        state.withLock { state in
            var copied = 0
            while copied < maximum, let head = state.chunks.first {
                let count = min(maximum - copied, head.count - state.headOffset)
                head.withUnsafeBytes { raw in
                    (UnsafeMutableRawPointer(destination) + copied).copyMemory(
                        from: raw.baseAddress! + state.headOffset, byteCount: count)
                }
                copied += count
                state.headOffset += count
                state.queuedBytes -= count
                if state.headOffset == head.count { Self.removeHead(from: &state) }
            }
            if copied > 0 { return copied }
            if state.ended { return nil }
            guard let connection = state.connection else { return nil }
            state.suspended = true
            MHD_suspend_connection(connection)
            return 0
        }
    }

    /// What the server's watch does every tick (on its own thread): ends a stream whose page
    /// has closed its connection, and sends a comment on one idle for `keepAlive` (proxies keep
    /// it open, and a page gone without a word is found by the failed write).
    func watch(now: ContinuousClock.Instant, keepAlive: Duration) {
        state.withLock { state in
            guard state.suspended, !state.ended, state.socket >= 0 else { return }
            var byte: UInt8 = 0
            let peeked = recv(state.socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            let gone =
                peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            if gone {
                Self.drop(&state)
            } else if now - state.lastWrite >= keepAlive {
                Self.append(Array(":\n\n".utf8), to: &state)
                state.lastWrite = now
                Self.resume(&state)
            }
        }
    }

    /// The server let the connection go (its response was freed): nothing may reach it now.
    func released() {
        state.withLock { state in
            state.ended = true
            state.connection = nil
            state.socket = -1
            state.suspended = false
            state.chunks = []
            state.queuedBytes = 0
            state.largest = 0
            state.largestCount = 0
        }
    }
}
