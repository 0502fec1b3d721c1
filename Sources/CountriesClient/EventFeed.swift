import CountriesCore

/// Turns a subscription's notifications into the changes a consumer acts on one by one: every
/// event exactly once and in seq order, from a position it may have reached in an earlier run
/// (`countries events --since`, `countries on-change --cursor`).
///
/// The subscription keeps a replica; the feed keeps a position (store and seq) and fills the
/// distance between the two from `history`, page by page. When that is impossible (the service
/// no longer keeps those events, or it runs on another store), it hands over the whole state
/// once as a ``Delivery/restart(_:_:)`` and goes on from there. The history fetch is a closure,
/// so the rules are unit-tested without sockets.
public struct EventFeed {
    /// Where the consumer stands.
    public struct Position: Equatable, Sendable {
        /// The store the seq belongs to; nil when unknown (a service older than v1.1).
        public var store: String?
        /// The last seq the consumer has acted on.
        public var seq: UInt64

        /// Creates a position.
        public init(store: String?, seq: UInt64) {
            self.store = store
            self.seq = seq
        }
    }

    /// Where to start.
    public enum Start: Equatable, Sendable {
        /// From the first snapshot on: nothing for the snapshot itself.
        case now
        /// The first snapshot as a restart, then every change (`on-change --initial`).
        case snapshot
        /// Every change after this position (from history), then every change.
        case after(Position)
    }

    /// Why the feed hands over the whole state instead of events.
    public enum RestartReason: Equatable, Sendable {
        /// The first snapshot, asked for with ``Start/snapshot``.
        case initial
        /// The service runs on another store than the position's: its seqs mean other changes.
        case storeChanged(from: String, to: String)
        /// The service no longer keeps the events between the position and its state.
        case historyGone(after: UInt64, upTo: UInt64)
        /// The service's history holds an event whose names break its own rules
        /// (``CountriesCore/Event/validateNames()``): it is not handed over; `reason` says which,
        /// escaped.
        case invalidEvent(seq: UInt64, reason: String)
        /// The events between the position and the service's state weigh more than
        /// ``EventFeed/maximumCatchUpBytes``: more than a service keeps, so not waited for
        /// and held one by one.
        case historyTooLong(after: UInt64, upTo: UInt64)
    }

    /// Most bytes of events (``CountriesCore/Event/estimatedBytes``) one catch-up holds before
    /// handing them over: what a store keeps at most (``CountriesCore/Limits/retainedEventBytes``).
    /// A peer whose list named seq 2^62 and whose pages never ended grew an `events --since 0`
    /// by 10 MB a second.
    public static let maximumCatchUpBytes = Limits.retainedEventBytes

    /// What the consumer acts on next.
    public enum Delivery: Equatable, Sendable {
        /// One change, the next after the position.
        case event(Event)
        /// The whole state: what happened in between cannot be told event by event.
        case restart(CountriesState, RestartReason)
    }

    /// One page of history: the events after `since`, the store that answered and whether more
    /// follow. Nil when the service no longer keeps them; throws when it cannot be asked.
    public typealias HistoryPage = (events: [Event], store: String?, more: Bool)

    /// The last position handed to the consumer; nil before the first snapshot.
    public private(set) var position: Position?
    private var start: Start

    /// Creates a feed that starts as `start` says.
    public init(start: Start) {
        self.start = start
        if case .after(let position) = start { self.position = position }
    }

    /// What the consumer must act on after these notifications of a subscription.
    ///
    /// - Parameters:
    ///   - notifications: what the subscription reported, in order.
    ///   - replica: the subscription's replica after them, and `store` its store.
    ///   - history: fetches the page after a seq; nil when the service no longer has it.
    public mutating func deliveries<Failure: Error>(
        for notifications: [SubscriptionMachine.Notification], replica: CountriesState?, store: String?,
        history: (UInt64) throws(Failure) -> HistoryPage?
    ) throws(Failure) -> [Delivery] {
        var out: [Delivery] = []
        // Only the last snapshot in the batch matters: the replica is what it and the events
        // after it made.
        let lastSnapshot = notifications.lastIndex {
            if case .replaced = $0 { return true }
            return false
        }
        var skipThrough: UInt64?
        for (offset, notification) in notifications.enumerated() {
            switch notification {
            case .phaseChanged, .rejected:
                continue
            case .replaced(let seq):
                guard offset == lastSnapshot, let replica else { continue }
                let after = notifications[(offset + 1)...].compactMap { item -> Event? in
                    if case .applied(let event) = item { return event }
                    return nil
                }
                if try !catchUp(
                    to: seq, then: after, replica: replica, store: store, history: history, into: &out)
                {
                    skipThrough = replica.seq
                }
            case .applied(let event):
                guard let current = position else { continue }
                if let skipThrough, event.seq <= skipThrough { continue }
                if event.seq == current.seq + 1 {
                    out.append(.event(event))
                    position = Position(store: event.store ?? current.store, seq: event.seq)
                }
            }
        }
        return out
    }

    /// Brings the position to the snapshot at `seq`: from history when it can, else with a
    /// restart to `replica` (the snapshot with `after` applied). Returns false when it restarted:
    /// `after` is then part of the state handed over.
    private mutating func catchUp<Failure: Error>(
        to seq: UInt64, then after: [Event], replica: CountriesState, store: String?,
        history: (UInt64) throws(Failure) -> HistoryPage?, into out: inout [Delivery]
    ) throws(Failure) -> Bool {
        func restart(_ reason: RestartReason) -> Bool {
            out.append(.restart(replica, reason))
            position = Position(store: store, seq: replica.seq)
            return false
        }
        guard let current = position else {
            if start == .snapshot { return restart(.initial) }
            position = Position(store: store, seq: seq)
            return true
        }
        if let from = current.store, let to = store, from != to {
            return restart(.storeChanged(from: from, to: to))
        }
        if current.seq == seq {
            position = Position(store: store ?? current.store, seq: seq)
            return true
        }
        // Same store (or unknown) and the service went back: only a restart is truthful.
        guard current.seq < seq else { return restart(.historyGone(after: current.seq, upTo: seq)) }
        var reached = current.seq
        var fetched: [Event] = []
        var fetchedBytes = 0
        while reached < seq {
            guard let page = try history(reached), page.store == nil || store == nil || page.store == store
            else { return restart(.historyGone(after: current.seq, upTo: seq)) }
            let before = reached
            for event in page.events where event.seq == reached + 1 && event.seq <= seq {
                do {
                    try event.validateNames()
                } catch {
                    return restart(.invalidEvent(seq: event.seq, reason: error.message))
                }
                fetchedBytes += event.estimatedBytes
                guard fetchedBytes <= Self.maximumCatchUpBytes else {
                    return restart(.historyTooLong(after: current.seq, upTo: seq))
                }
                fetched.append(event)
                reached = event.seq
            }
            if reached == before || !page.more { break }
        }
        guard reached == seq else { return restart(.historyGone(after: current.seq, upTo: seq)) }
        out += fetched.map(Delivery.event)
        position = Position(store: store ?? current.store, seq: seq)
        return true
    }
}
