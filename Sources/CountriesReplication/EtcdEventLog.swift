import CountriesCore
import CountriesStore
import Etcd
import Foundation

/// The events under a prefix as a replica reads them: a replay of the kept events onto a state,
/// the events after a seq (`history`), and the oldest still kept (docs/HA.md, "Reads").
///
/// Seqs have no gaps, so every range of events ends at the seq it needs
/// (``EtcdLayout/events(from:before:revision:limit:keysOnly:)``), never at the log's end: etcd
/// 3.4 counts every key of a range whatever its limit, and walks the deleted events it keeps
/// until it compacts. Each key is one commit's entry (``EtcdLayout/entries(in:seedRows:)``). A
/// value that is not the events its key names is recorded as damage and thrown, never skipped.
/// Used from the service's thread only, through ``EtcdStore``.
final class EtcdEventLog {
    /// Events per page of a replay: over the 10,000 kept events, one page of 100 ranged to the
    /// log's end took 7.5 ms, and 3.5 ms ranged to its last seq (docs/BENCHMARKS.md, "Stop 29").
    static let eventsPerPage = 1_000

    private let client: EtcdClient
    private let layout: EtcdLayout
    /// What a reset's marker in the log stands for (``EtcdResetMarker``).
    private let seedRows: [IndexedCountry]
    private let health: ClusterHealth
    /// The oldest event the last look found. Events are written above the newest only, so none
    /// below it comes back, and the next look starts here.
    private var oldestFound: UInt64 = 0
    /// The last look's answer and when it was made: `status` gives it for
    /// ``oldestLookInterval``.
    private var lastLook: (oldest: UInt64, at: ContinuousClock.Instant)?
    /// How long a look for the oldest event stands. Each is a range on the service's thread,
    /// and every client of several replicas asks `status` (docs/PROTOCOL.md, "Clients of
    /// replicas"); a second's trims may have moved it on, so a `history` from it may be
    /// answered `history_truncated`, as one from any seq a little old is.
    var oldestLookInterval = Duration.seconds(1)

    init(client: EtcdClient, layout: EtcdLayout, seedRows: [IndexedCountry], health: ClusterHealth) {
        self.client = client
        self.layout = layout
        self.seedRows = seedRows
        self.health = health
    }

    /// Replays the kept events after `state.seq` onto it (at `revision`, 0 for the latest);
    /// false when the next one is no longer kept. A state's seq is a commit's last (a snapshot's
    /// is one too), so the next event starts an entry of the log.
    func replay(into state: inout CountriesState, atRevision revision: Int64) throws(StateStoreError) -> Bool
    {
        // A catch-up of a replica that knows of nothing newer than a page ahead (a read's, on
        // a replica caught up) reads to the log's end in one range, where a range that ends at
        // the page's end found nothing and needed a second look past it. The keys after a
        // caught-up state are few, so etcd's counting them all costs little.
        var toTheEnd = revision == 0 && health.latestSeq <= state.seq + UInt64(Self.eventsPerPage)
        var revision = revision
        while true {
            let end = state.seq + 1 + UInt64(Self.eventsPerPage)
            let request =
                toTheEnd
                ? EtcdRangeRequest.from(
                    layout.event(state.seq + 1), toPrefixEnd: layout.eventsPrefix, limit: Self.eventsPerPage)
                : layout.events(from: state.seq + 1, before: end, revision: revision)
            let page = try EtcdStore.read { () throws(EtcdError) in try client.range(request) }
            // The header's revision is etcd's newest: a read at an older one stays there.
            if revision == 0 { revision = page.revision }
            // Nothing in the page: the state is the newest, or the log was trimmed past the page
            // (a replica a page or more behind the kept events). An entry after it tells which,
            // unless the page ran to the log's end.
            if page.kvs.isEmpty {
                if toTheEnd { return true }
                let later = EtcdRangeRequest.from(
                    layout.event(end), toPrefixEnd: layout.eventsPrefix, limit: 1, revision: revision,
                    keysOnly: true)
                let after = try EtcdStore.read { () throws(EtcdError) in try client.range(later) }
                return after.kvs.isEmpty
            }
            // A key that names no seq (not the canonical 20 digits) is not part of the log,
            // as the event tail skips it too: taken for damage, one put by hand stopped every
            // catch-up.
            for kv in page.kvs where layout.seq(ofEventKey: kv.key) != nil {
                guard let events = layout.events(in: kv, seedRows: seedRows) else {
                    throw damaged(kv, after: state.seq)
                }
                for event in events where event.seq > state.seq {
                    guard event.seq == state.seq + 1 else { return false }
                    do {
                        try state.replay(event)
                    } catch {
                        throw StateStoreError(
                            "event \(event.seq) does not apply to the state before it: \(error)")
                    }
                }
            }
            if toTheEnd {
                // Every entry to the log's end was in the page, or the rest comes in pages.
                if !page.more { return true }
                toTheEnd = false
                continue
            }
            // Seqs have no gaps: events that end before the range does reached the newest.
            if state.seq + 1 < end { return true }
        }
    }

    /// The events after `since`, at most `limit` (and 10,000), none after `currentSeq`; nil when
    /// they are no longer kept. `since` is any seq a client names, so the range starts an
    /// entry's width early, at the entry that may hold the next one.
    func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(StateStoreError) -> [Event]? {
        if since > currentSeq { return nil }
        if since == currentSeq || limit <= 0 { return [] }
        let count = UInt64(min(limit, 10_000))
        let end = min(since + 1 + count, currentSeq + 1)
        let request = layout.events(from: EtcdLayout.firstEntry(holding: since + 1), before: end)
        let found = try EtcdStore.read { () throws(EtcdError) in try client.range(request) }
        var events: [Event] = []
        for kv in found.kvs where layout.seq(ofEventKey: kv.key) != nil {
            guard let entry = layout.events(in: kv, seedRows: seedRows) else {
                throw damaged(kv, after: since + UInt64(events.count))
            }
            for event in entry where event.seq > since && event.seq < end {
                guard event.seq == since + 1 + UInt64(events.count) else { return nil }
                events.append(event)
            }
        }
        return events.isEmpty ? nil : events
    }

    /// The seq of the oldest event still under the prefix, up to `currentSeq` (`currentSeq + 1`
    /// when none is kept).
    ///
    /// Looked for from the last answer on, in windows each twice as wide as the one before: a
    /// range over the whole log made etcd 3.4 count (and walk the deleted events it still
    /// keeps) every key, 6 to 14 ms a look, where a window of 64 took 1.0 to 1.4 ms
    /// (docs/BENCHMARKS.md, "Stop 29"). After a restore to an older log, the answer may be later
    /// than the oldest kept: a reader then takes a snapshot where it could have read history,
    /// never the reverse.
    func oldestRetainedSeq(currentSeq: UInt64) throws(StateStoreError) -> UInt64 {
        let now = ContinuousClock.now
        if let lastLook, now - lastLook.at < oldestLookInterval {
            return min(lastLook.oldest, currentSeq + 1)
        }
        let oldest = try lookForOldest(currentSeq: currentSeq)
        lastLook = (oldest, now)
        return oldest
    }

    private func lookForOldest(currentSeq: UInt64) throws(StateStoreError) -> UInt64 {
        var start = oldestFound
        var width: UInt64 = 64
        // At most 24 windows (up to 2^20 seqs wide: about 11 million seqs in all), then one range
        // to the current seq: a `seq` raised by hand near 2^63 over a log that ends far below
        // made the windows go on for days, on the service's thread.
        for _ in 0..<24 {
            guard start <= currentSeq else { return currentSeq + 1 }
            let end = min(start + width, currentSeq + 1)
            if let seq = try firstSeq(from: start, before: end) { return seq }
            start = end
            width = min(width * 2, 1 << 20)
        }
        guard start <= currentSeq else { return currentSeq + 1 }
        return try firstSeq(from: start, before: currentSeq + 1) ?? currentSeq + 1
    }

    /// The first seq kept from `start` up to `end` (excluded), remembered as the oldest found.
    /// A few keys are read: one that names no seq is not part of the log.
    private func firstSeq(from start: UInt64, before end: UInt64) throws(StateStoreError) -> UInt64? {
        let request = layout.events(from: start, before: end, limit: 8, keysOnly: true)
        let found = try EtcdStore.read { () throws(EtcdError) in try client.range(request) }
        guard let seq = found.kvs.lazy.compactMap({ self.layout.seq(ofEventKey: $0.key) }).first else {
            return nil
        }
        oldestFound = seq
        return seq
    }

    /// A value in the log that is not the events its key names: recorded (the replica stops
    /// heartbeating and `status` names it) and described as what to do.
    private func damaged(_ kv: EtcdKeyValue, after seq: UInt64) -> StateStoreError {
        let description = EtcdLayout.damage(
            at: kv,
            "this replica cannot go past seq \(seq); rewrite that key with its event (or restore etcd from a backup), and check who can write to etcd (docs/SECURITY.md)"
        )
        health.recordDamage(description)
        return StateStoreError(description)
    }
}

@available(*, unavailable) extension EtcdEventLog: Sendable {}
