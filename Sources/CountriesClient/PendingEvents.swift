import CountriesCore

/// The events a subscription received but could not apply yet (a hole before them, or no
/// replica to apply them to): sorted by seq, each seq once, at most ``limit`` of them.
/// ``SubscriptionMachine`` applies them from the front as its replica reaches them.
struct PendingEvents: Sendable {
    /// The most events kept: past it the subscription is too far behind for history to be
    /// worth it, and starts again from a snapshot.
    let limit: Int
    /// The events, by ascending seq, without duplicates.
    private(set) var events: [Event] = []

    /// A buffer of at most `limit` events (at least one).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    var isEmpty: Bool { events.isEmpty }
    var first: Event? { events.first }
    var last: Event? { events.last }

    /// Adds `event` in seq order (a seq already held is not added again). Returns false when
    /// the buffer was full: everything held before is forgotten, and only `event` is kept.
    mutating func insert(_ event: Event) -> Bool {
        var kept = true
        if events.count >= limit {
            events.removeAll()
            kept = false
        }
        guard let last = events.last, last.seq >= event.seq else {
            events.append(event)
            return kept
        }
        var low = 0
        var high = events.count
        while low < high {
            let middle = (low + high) / 2
            if events[middle].seq < event.seq { low = middle + 1 } else { high = middle }
        }
        if events[low].seq != event.seq { events.insert(event, at: low) }
        return kept
    }

    /// Forgets the events up to `seq`: the replica has them already.
    mutating func drop(through seq: UInt64) {
        events.removeFirst(events.prefix { $0.seq <= seq }.count)
    }

    /// Forgets the first `count` events (applied).
    mutating func removeFirst(_ count: Int) {
        events.removeFirst(count)
    }

    /// Forgets the events that `isStale` says no longer belong.
    mutating func removeAll(where isStale: (Event) -> Bool = { _ in true }) {
        events.removeAll(where: isStale)
    }
}
