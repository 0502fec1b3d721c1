import Foundation

/// Whether a connecting socket has reached its peer, seen through its monitor
/// (`zmq_socket_monitor`): a connect that fails (nothing listening at a tcp port, no socket file
/// at an ipc path) is known at once, instead of when a reply's timeout runs out.
///
/// libzmq retries such a connect by itself and says so with `ZMQ_EVENT_CONNECT_RETRIED`; a socket
/// that retries before it was ever connected has found nothing there (``State/refused``). A
/// socket that was connected once stays ``State/connected`` (a CURVE handshake that fails also
/// reconnects, and is not a refusal).
///
/// Once connected, the watch stops the socket's monitor: libzmq would otherwise queue an event
/// for every later reconnect, and past the queue's limit its I/O thread would wait for a reader.
/// ``close()`` stops it too before the reading socket goes (see ``Socket/startMonitor(_:kinds:)``).
public final class ConnectionWatch {
    /// What the watched socket's connect has come to.
    public enum State: Sendable, Equatable {
        /// No answer yet either way (a remote host that drops the SYN stays here).
        case connecting
        /// It reached a peer at least once.
        case connected
        /// The connect failed before any peer was reached: nothing is listening there.
        case refused
    }

    /// The socket the events arrive on: poll it for ``PollEvents/readable``, then call
    /// ``update()``.
    public let events: Socket
    /// What the events read so far say.
    public private(set) var state = State.connecting
    /// The socket watched; its monitor is stopped through it.
    private let watched: Socket

    /// Starts watching `watched`. Call it before `watched.connect(_:)`: libzmq drops the events
    /// that come before the watcher is attached.
    public init(_ watched: Socket, context: Context) throws(ZMQError) {
        // A name of its own per watch: inproc names are per context, and watches come and go.
        let endpoint = "inproc://countries.connection-watch.\(UUID().uuidString)"
        self.watched = watched
        try watched.startMonitor(endpoint, kinds: [.connected, .connectRetried])
        events = try context.makeSocket(.pair)
        do {
            try events.connect(endpoint)
        } catch {
            watched.stopMonitor()
            events.close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Reads the events that have arrived (without waiting) and returns the state they lead to.
    @discardableResult
    public func update() throws(ZMQError) -> State {
        while let frames = try events.receive(dontWait: true) {
            guard let event = MonitorEvent(frames: frames) else { continue }
            state = Self.next(state, after: event.kind)
        }
        // Connected is for good: nothing later changes the answer, so nothing more is told.
        if state == .connected { watched.stopMonitor() }
        return state
    }

    /// The state after one event: connected once is connected for good; a retry before that is
    /// a refusal.
    static func next(_ state: State, after kind: MonitorEvent.Kinds) -> State {
        switch state {
        case .connected: .connected
        case .connecting, .refused:
            if kind.contains(.connected) {
                .connected
            } else if kind.contains(.connectRetried) {
                .refused
            } else {
                state
            }
        }
    }

    /// Stops the watched socket's monitor, then stops reading events (idempotent).
    public func close() {
        watched.stopMonitor()
        events.close()
    }
}

@available(*, unavailable) extension ConnectionWatch: Sendable {}
