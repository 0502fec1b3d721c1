import CountriesCore
import CountriesStore
import Foundation

/// The `--in-memory` store without SQLite: the same semantics and limits as ``SQLiteStore`` (the last
/// ``Limits/retainedEvents`` events, the request ids ``RequestIDRetention`` keeps), gone with
/// the process. A commit cannot fail.
final class MemoryStore: StateStore {
    let path = ":memory:"
    /// New for every start: the seqs of an in-memory store die with it.
    let identity = StoreIdentity.make()
    var sizeOnDisk: Int { 0 }

    /// The rows and seq as committed (a ``CountriesState`` is made only when asked).
    private var countries: [Country]
    private var seq: UInt64 = 0
    /// The retained events, oldest first; `events[head...]` are live.
    private var events: [Event] = []
    private var eventsHead = 0
    /// Remembered requests by id, with the ordinal they were remembered at.
    private var remembered: [String: (ordinal: Int64, request: RememberedRequest)] = [:]
    private var lastOrdinal: Int64 = 0
    /// Which ids are kept, by count and age (the same rule as ``SQLiteStore``).
    private var retention: RequestIDRetention
    private let clock: @Sendable () -> Int64

    init(
        seed: [Country], retention: RequestIDRetention = RequestIDRetention(),
        clock: @escaping @Sendable () -> Int64 = { RequestIDWindow.nowMilliseconds }
    ) {
        countries = seed
        self.retention = retention
        self.clock = clock
    }

    /// A commit here is a few assignments: nothing to share, so a batch's replies need not
    /// wait for each other.
    var groupsCommits: Bool { false }

    func loadState() throws(StoreOpenError) -> CountriesState {
        CountriesState(countries: countries, seq: seq)
    }

    func rememberedRequest(for id: String) throws(StateStoreError) -> RememberedRequest? {
        guard let found = remembered[id], retention.keeps(ordinal: found.ordinal, nowMilliseconds: clock())
        else { return nil }
        return found.request
    }

    func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(StateStoreError) -> [Event]? {
        if since > currentSeq { return nil }
        if since == currentSeq { return [] }
        let oldest = try oldestRetainedSeq(currentSeq: currentSeq)
        guard since + 1 >= oldest else { return nil }
        // Seqs are consecutive, so the position of `since + 1` is known.
        let start = eventsHead + Int(since + 1 - oldest)
        return Array(events[start...].prefix(max(0, limit)))
    }

    func oldestRetainedSeq(currentSeq: UInt64) throws(StateStoreError) -> UInt64 {
        eventsHead < events.count ? events[eventsHead].seq : currentSeq + 1
    }

    func commit(_ batch: StoreBatch) throws(StateStoreError) {
        for event in batch.events {
            // The handler made these events from a valid state: they apply as they are.
            switch event.kind {
            case .changed(let row): countries[row.index].visited = row.visited
            case .added(let row): countries.append(row.country)
            case .removed(let row): countries.remove(at: row.index)
            case .reset(let rows): countries = rows.map(\.country)
            }
            seq = event.seq
            events.append(event)
        }
        if let last = batch.events.last {
            let keepFrom = Int64(last.seq) - Int64(Limits.retainedEvents)
            while eventsHead < events.count, Int64(events[eventsHead].seq) <= keepFrom { eventsHead += 1 }
            if eventsHead > Limits.retainedEvents {
                events.removeFirst(eventsHead)
                eventsHead = 0
            }
        }
        let now = clock()
        for request in batch.requests {
            lastOrdinal += 1
            remembered[request.id] = (lastOrdinal, request)
            retention.remember(ordinal: lastOrdinal, id: request.id, bytes: request.bytes, milliseconds: now)
        }
        let (forgettable, _) = retention.forgettable(nowMilliseconds: now)
        // One look-up per id forgotten: once the store holds its most ids, every commit forgets
        // one, and looking it up twice (compare, then remove) hashed it twice.
        for entry in retention.forget(forgettable) {
            if let index = remembered.index(forKey: entry.id),
                remembered[index].value.ordinal == entry.ordinal
            {
                remembered.remove(at: index)
            }
        }
    }
}
