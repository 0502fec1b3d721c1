/// When a subscriber connects its endpoints anew after hearing nothing.
///
/// libzmq 4.3 reconnects a connected endpoint after a network error, but gives it up for good
/// after a protocol error: one frame past `ZMQ_MAXMSGSIZE` from a publisher (or from anyone
/// who bound its address while it was down) cut a subscriber off from that endpoint forever,
/// a new publisher there included. A subscriber that expects heartbeats and has heard nothing
/// for ``after`` connects its endpoints anew (``Socket/connectAnew(_:)``), and again every
/// ``after`` while the silence lasts: a publisher that is simply down costs a reconnection
/// every few seconds. A pure value: it is told the time.
public struct SilenceReconnection: Sendable {
    /// How long a silence lasts before the endpoints are connected anew.
    public let after: Duration
    private var lastActivity: ContinuousClock.Instant

    /// Silent since `start`.
    public init(after: Duration, since start: ContinuousClock.Instant) {
        self.after = after
        lastActivity = start
    }

    /// A message came at `now`.
    public mutating func heard(now: ContinuousClock.Instant) {
        lastActivity = now
    }

    /// When ``isDue(now:)`` next says yes, unless a message comes first.
    public var deadline: ContinuousClock.Instant { lastActivity + after }

    /// Whether to connect anew at `now`; yes counts as activity, so that the next is
    /// ``after`` later.
    public mutating func isDue(now: ContinuousClock.Instant) -> Bool {
        guard now >= deadline else { return false }
        lastActivity = now
        return true
    }
}

extension Socket {
    /// Disconnects each of `endpoints` and connects it again: a new session for each, whatever
    /// libzmq made of the old one (a SUB or XSUB sends its subscriptions on the new
    /// connection). Errors are ignored: the endpoint may already be gone from the socket.
    public func connectAnew(_ endpoints: [String]) {
        for endpoint in endpoints {
            try? disconnect(endpoint)
            try? connect(endpoint)
        }
    }
}
