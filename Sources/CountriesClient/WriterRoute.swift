import CountriesCore

/// Which of a client's endpoints its changes go to first: the elected writer's, as `status`
/// names it (docs/PROTOCOL.md, "Clients of replicas").
///
/// Any replica takes a change and forwards it to the writer when it is not the writer itself
/// (docs/HA.md, "Commits"), so this only spares a change that hop: a client that never asks,
/// or asks a replica that cannot say, is as correct as one that does. A plain value, so when
/// to ask and what an answer means are tested without sockets.
public struct WriterRoute: Sendable {
    /// How long an answer holds before a change asks `status` again. A writer elected since
    /// costs the changes in between a hop each (the former writer forwards them), not a
    /// failure; a change answered from another endpoint than the writer's asks again at once.
    public static let freshFor: Duration = .seconds(10)

    /// The client's command endpoints, in the order given.
    public let endpoints: [String]
    /// The index of the endpoint the last answer named as the writer; nil when it named none of
    /// them (no writer elected, a single service, or the writer under a name not in `endpoints`).
    public private(set) var writer: Int?
    /// Whether any `status` has answered yet.
    private var asked = false
    /// When the last answer came, on the client's monotonic clock; nil until one, or once it
    /// no longer holds.
    private var answeredAt: ContinuousClock.Instant?
    /// A writer that did not answer a change another endpoint then answered, and until when it
    /// is not followed: a writer this client cannot reach (its CURVE allow-list lacks the
    /// client's key, a network between them is cut) while the replica that forwards can, costs
    /// one try's timeout per ``freshFor``, not one per change.
    private var passedOver: (index: Int, until: ContinuousClock.Instant)?

    /// A route over `endpoints` that knows no writer yet.
    public init(endpoints: [String]) {
        self.endpoints = endpoints
    }

    /// Whether a change sent at `now` should ask `status` first: with several endpoints, when
    /// no answer holds. A first change whose store is `pinnedByHand` (`--if-store`) asks
    /// nothing: it needs no read to pin it, so it is sent with no request before it, as a
    /// script that pins its changes expects; once a `status` has answered, the route is kept.
    public func isDue(now: ContinuousClock.Instant, pinnedByHand: Bool = false) -> Bool {
        guard endpoints.count > 1 else { return false }
        guard asked else { return !pinnedByHand }
        guard let answeredAt else { return true }
        return now - answeredAt >= Self.freshFor
    }

    /// Takes the `writer` field of a `status` the endpoint at `index` answered at `now`
    /// (`this replica`, the writer's command endpoint, `none`, or absent on a single service);
    /// returns the index of the endpoint that writes, when it is one of ours.
    public mutating func learn(writerField: String?, from index: Int, now: ContinuousClock.Instant) -> Int? {
        asked = true
        answeredAt = now
        switch writerField {
        case ServiceStatus.thisReplica?: writer = index
        case let named?: writer = endpoints.firstIndex(of: named)
        case nil: writer = nil
        }
        if let passedOver, passedOver.index == writer, now < passedOver.until { writer = nil }
        return writer
    }

    /// A change ended at `now`, answered from the endpoint at index `answerer`, or with no
    /// usable reply (nil). Either way but the writer's answer, the writer may have changed: the
    /// next change asks again. A writer passed over for another endpoint's answer (it timed out,
    /// or refused the connection) is not gone back to for ``freshFor``, even if named again.
    public mutating func changeEnded(answeredFrom answerer: Int?, now: ContinuousClock.Instant) {
        guard let answerer else {
            answeredAt = nil
            return
        }
        guard let writer, writer != answerer else { return }
        answeredAt = nil
        passedOver = (writer, now + Self.freshFor)
        self.writer = nil
    }
}
