import Dispatch
@preconcurrency import Glibc
import SystemSupport

/// What the server keeps about its connections, and the watch that acts on it every tick:
/// a connection that has not sent a whole request within the request timeout is shut down
/// (slowloris: headers one byte at a time, or an idle keep-alive), a page that closed its
/// event stream is let go, and an idle stream gets its keep-alive comment.
///
/// A connection's socket is shut down only while the connection is known open: the library
/// tells of a closed connection before it closes the socket, under the same lock.
final class ConnectionWatch: Sendable {
    private struct Connection {
        var socket: Int32
        /// When the request being read must be whole; nil while one is being answered.
        var deadline: ContinuousClock.Instant?
    }

    private struct State {
        var connections: [UInt: Connection] = [:]
        var streams: [ObjectIdentifier: EventStream] = [:]
        var responders: [ObjectIdentifier: HTTPResponder] = [:]
        var stopping = false
    }

    private let state = Locked(State())
    private let requestTimeout: Duration
    private let keepAlive: Duration
    private let queue = DispatchQueue(label: "countries.http.watch")
    // nonisolated(unsafe): a dispatch source is safe to use from any thread.
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    init(requestTimeout: Duration, keepAlive: Duration, interval: Duration) {
        self.requestTimeout = requestTimeout
        self.keepAlive = keepAlive
        timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds =
            Int(interval.components.seconds) * 1_000_000_000
            + Int(interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
    }

    /// The key a connection is kept under, here and in ``ConnectionsPerClient``.
    static func key(_ connection: OpaquePointer?) -> UInt {
        UInt(bitPattern: connection.map { Int(bitPattern: $0) } ?? 0)
    }

    /// A connection was accepted: its first request must be whole within the timeout.
    func opened(_ connection: OpaquePointer?, socket: Int32) {
        let deadline = ContinuousClock.now + requestTimeout
        state.withLock {
            $0.connections[Self.key(connection)] = Connection(socket: socket, deadline: deadline)
        }
    }

    /// The library is about to close the connection's socket.
    func closed(_ connection: OpaquePointer?) {
        _ = state.withLock { $0.connections.removeValue(forKey: Self.key(connection)) }
    }

    /// The request on `connection` was read in whole and is being answered.
    func requestRead(on connection: OpaquePointer?) {
        state.withLock { $0.connections[Self.key(connection)]?.deadline = nil }
    }

    /// The request on `connection` was answered: the next must be whole within the timeout.
    func requestAnswered(on connection: OpaquePointer?) {
        let deadline = ContinuousClock.now + requestTimeout
        state.withLock { $0.connections[Self.key(connection)]?.deadline = deadline }
    }

    /// Keeps `stream` watched; false when the server is stopping (the stream is ended).
    func track(_ stream: EventStream) -> Bool {
        let tracked = state.withLock { state in
            guard !state.stopping else { return false }
            state.streams[ObjectIdentifier(stream)] = stream
            return true
        }
        if !tracked { stream.end() }
        return tracked
    }

    func forget(_ stream: EventStream) {
        _ = state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// Keeps `responder` to be answered if the server stops first; false when it is stopping.
    func track(_ responder: HTTPResponder) -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.responders[ObjectIdentifier(responder)] = responder
            return true
        }
    }

    func forget(_ responder: HTTPResponder) {
        _ = state.withLock { $0.responders.removeValue(forKey: ObjectIdentifier(responder)) }
    }

    /// The number of event streams open now.
    var openStreams: Int { state.withLock { $0.streams.count } }

    /// Whether every stream has closed and every waiting request has been answered.
    var isDrained: Bool { state.withLock { $0.streams.isEmpty && $0.responders.isEmpty } }

    /// Stops the watch, ends every stream and answers every waiting request, so that no
    /// connection stays suspended (the library must not stop with one).
    func stop() {
        timer.cancel()
        queue.sync {}
        let (streams, responders) = state.withLock { state in
            state.stopping = true
            return (Array(state.streams.values), Array(state.responders.values))
        }
        for stream in streams { stream.end() }
        for responder in responders {
            responder.respond(.text(503, "the web process is stopping; try again"))
        }
    }

    private func tick() {
        let now = ContinuousClock.now
        let streams = state.withLock { state in
            for (key, connection) in state.connections {
                guard let deadline = connection.deadline, deadline <= now else { continue }
                // The library sees the shut-down socket as closed by the peer and lets it go.
                shutdown(connection.socket, Int32(SHUT_RDWR))
                state.connections[key]?.deadline = nil
            }
            return Array(state.streams.values)
        }
        for stream in streams { stream.watch(now: now, keepAlive: keepAlive) }
    }
}
