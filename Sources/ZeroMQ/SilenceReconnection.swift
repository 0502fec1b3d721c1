/// When a subscriber connects its endpoints anew after hearing nothing.
///
/// libzmq 4.3 reconnects a connected endpoint after a network error, but gives it up for good
/// after a protocol error: one frame past `ZMQ_MAXMSGSIZE` from a publisher (or from anyone
/// who bound its address while it was down) cut a subscriber off from that endpoint forever,
/// a new publisher there included. A subscriber that expects heartbeats and has heard nothing
/// for ``after`` connects its endpoints anew (``Socket/connectAnew(_:)``), and again every
/// ``after`` while the silence lasts: a publisher that is simply down costs a reconnection
/// every few seconds. A pure value: it is told the time, and when the last message came (the
/// caller keeps that, often for other uses too).
public struct SilenceReconnection: Sendable {
    /// How long a silence lasts before the endpoints are connected anew.
    public let after: Duration
    private var lastReconnection: ContinuousClock.Instant?

    /// Nothing reconnected yet.
    public init(after: Duration) {
        self.after = after
    }

    /// When ``isDue(lastHeard:now:)`` next says yes, unless a message comes first.
    public func deadline(lastHeard: ContinuousClock.Instant) -> ContinuousClock.Instant {
        max(lastHeard, lastReconnection ?? lastHeard) + after
    }

    /// Whether to connect anew at `now`, the last message having come at `lastHeard`; after a
    /// yes the next is ``after`` later.
    public mutating func isDue(lastHeard: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Bool {
        guard now >= deadline(lastHeard: lastHeard) else { return false }
        lastReconnection = now
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
