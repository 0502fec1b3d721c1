import CountriesCore

/// The events a subscription received but could not apply yet (a hole before them, or no
/// replica to apply them to): sorted by seq, each seq once, at most ``limit`` of them and about
/// ``byteLimit`` bytes. ``SubscriptionMachine`` applies them from the front as its replica
/// reaches them.
///
/// Bounded in bytes too: a reset of the longest list is 16 MB, so 10,000 events may be
/// 160 GB, and a publisher (or one behind a relay, whose events are legal in shape) that sends
/// resets past a hole would have made a `watch` hold them all.
struct PendingEvents: Sendable {
    /// The most events kept: past it the subscription is too far behind for history to be
    /// worth it, and starts again from a snapshot.
    let limit: Int
    /// The most bytes of events kept (``CountriesCore/Event/estimatedBytes``), past which the
    /// same happens; one event is always kept, however big.
    let byteLimit: Int
    /// The events, by ascending seq, without duplicates.
    private(set) var events: [Event] = []
    /// The events' estimated bytes, summed: kept, so that an insertion does not walk them all.
    private(set) var bytes = 0

    /// A buffer of at most `limit` events (at least one) and `byteLimit` bytes of them.
    init(limit: Int, byteLimit: Int = Int.max) {
        self.limit = max(1, limit)
        self.byteLimit = byteLimit
    }

    var isEmpty: Bool { events.isEmpty }
    var first: Event? { events.first }
    var last: Event? { events.last }

    /// Adds `event` in seq order (a seq already held is not added again). Returns false when
    /// the buffer was full: everything held before is forgotten, and only `event` is kept.
    mutating func insert(_ event: Event) -> Bool {
        var kept = true
        let size = event.estimatedBytes
        if events.count >= limit || (!events.isEmpty && bytes > byteLimit - size) {
            removeAll()
            kept = false
        }
        guard let last = events.last, last.seq >= event.seq else {
            events.append(event)
            bytes += size
            return kept
        }
        var low = 0
        var high = events.count
        while low < high {
            let middle = (low + high) / 2
            if events[middle].seq < event.seq { low = middle + 1 } else { high = middle }
        }
        if events[low].seq != event.seq {
            events.insert(event, at: low)
            bytes += size
        }
        return kept
    }

    /// Forgets the events up to `seq`: the replica has them already.
    mutating func drop(through seq: UInt64) {
        removeFirst(events.prefix { $0.seq <= seq }.count)
    }

    /// Forgets the first `count` events (applied).
    mutating func removeFirst(_ count: Int) {
        bytes -= events.prefix(count).reduce(0) { $0 + $1.estimatedBytes }
        events.removeFirst(count)
    }

    /// Forgets the events that `isStale` says no longer belong.
    mutating func removeAll(where isStale: (Event) -> Bool = { _ in true }) {
        events.removeAll(where: isStale)
        bytes = events.reduce(0) { $0 + $1.estimatedBytes }
    }
}
