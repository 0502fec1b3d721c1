import CountriesCore

/// What a subscriber without a screen (`events`, `on-change`, a piped `watch`) says on stderr about
/// its connection, so a user is never left looking at nothing: "waiting for EP" once when it was
/// not live within ``patience`` of the start, the reason and where it waits each time the view goes
/// stale after that, and the seq each time it is live. A plain value fed the phase and the clock,
/// so every sequence is tested without sockets.
public struct SubscriberNotices: Sendable {
    /// Where the subscriber waits, as the lines name it.
    public let endpoints: LiveSubscription.Endpoints
    /// How long the first list may take before the subscriber says it is waiting.
    public let patience: Duration
    private let started: ContinuousClock.Instant
    private var phase = SubscriptionPhase.connecting
    private var saidWaiting = false
    /// Whether it was ever live: before that, stale (a first list, no heartbeat yet) is still
    /// waiting, already said.
    private var wasLive = false
    /// The subscription's count of events it dropped, when last looked at.
    private var dropped = 0
    /// Whether drops were said since the subscriber was last live: once an episode.
    private var saidDrops = false

    /// Notices for a subscriber that started at `now`.
    public init(endpoints: LiveSubscription.Endpoints, patience: Duration, now: ContinuousClock.Instant) {
        self.endpoints = endpoints
        self.patience = patience
        started = now
    }

    /// `tcp://h:5555 (events tcp://h:5556)`: the endpoints a subscriber needs, both.
    public var waitingFor: String { "\(endpoints.command) (events \(endpoints.events))" }

    /// The lines due at `now`, the subscription being in `phase` with its replica at `seq`
    /// and `droppedEvents` dropped so far (``LiveSubscription/droppedEvents``): at most one per
    /// change of phase, the "waiting" line once while the first list is due, and "fell behind"
    /// once until it is live again when it dropped events, so that a gap it made itself is
    /// not taken for the service's or the network's.
    public mutating func lines(
        phase: SubscriptionPhase, seq: UInt64?, now: ContinuousClock.Instant, droppedEvents: Int = 0
    ) -> [String] {
        var lines: [String] = []
        if droppedEvents > dropped {
            if !saidDrops {
                saidDrops = true
                lines.append(
                    "fell behind: \(droppedEvents - dropped) events dropped here, they came faster than this subscriber took them; catching up"
                )
            }
            dropped = droppedEvents
        }
        if phase != self.phase {
            self.phase = phase
            switch phase {
            case .stale(let reason) where wasLive: lines.append("stale: \(reason); waiting for \(waitingFor)")
            case .live:
                wasLive = true
                saidDrops = false
                lines.append("live at seq \(seq ?? 0)")
            case .connecting, .stale: break
            }
        }
        if !wasLive, !saidWaiting, now - started >= patience {
            saidWaiting = true
            lines.append("waiting for \(waitingFor)")
        }
        return lines
    }
}
