import CountriesCore
import CountriesStore
import Foundation

/// The `--in-memory` store without SQLite: the same semantics and limits as ``SQLiteStore`` (the
/// last ``Limits/retainedEvents`` events within ``Limits/retainedEventBytes``, the request ids
/// ``RequestIDRetention`` keeps), gone with the process. A commit cannot fail.
final class MemoryStore: StateStore {
    let path = ":memory:"
    /// New for every start: the seqs of an in-memory store die with it.
    let identity = StoreIdentity.make()
    var sizeOnDisk: Int { 0 }

    /// Everything committed, in one value: a commit changes it through one access, where seven
    /// stored properties changed one by one cost a runtime exclusivity check each (about 75
    /// instructions apiece, docs/BENCHMARKS.md, "Stop 48").
    private var contents: Contents
    private let clock: @Sendable () -> Int64

    init(
        seed: [Country], retention: RequestIDRetention = RequestIDRetention(),
        retainedEventBytes: Int = Limits.retainedEventBytes,
        clock: @escaping @Sendable () -> Int64 = { SteadyWallClock.process.nowMilliseconds }
    ) {
        contents = Contents(countries: seed, retention: retention, retainedEventBytes: retainedEventBytes)
        self.clock = clock
    }

    /// A commit here is a few assignments: nothing to share, so a batch's replies need not
    /// wait for each other.
    var groupsCommits: Bool { false }

    /// Assignments in memory, gone with the process anyway.
    var commitCannotFail: Bool { true }

    func loadState() throws(StoreOpenError) -> CountriesState {
        CountriesState(countries: contents.countries, seq: contents.seq)
    }

    func rememberedRequest(for id: String) throws(StateStoreError) -> RememberedRequest? {
        contents.rememberedRequest(for: id, nowMilliseconds: clock())
    }

    func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(StateStoreError) -> [Event]? {
        contents.events(after: since, currentSeq: currentSeq, limit: limit)
    }

    func oldestRetainedSeq(currentSeq: UInt64) throws(StateStoreError) -> UInt64 {
        contents.oldestRetainedSeq(currentSeq: currentSeq)
    }

    func commit(_ batch: StoreBatch) throws(StateStoreError) {
        contents.commit(batch, nowMilliseconds: clock())
    }

    var requestIDsForgottenYoung: Int { contents.remembered.forgottenYoung }
}

@available(*, unavailable) extension MemoryStore: Sendable {}

extension MemoryStore {
    /// The rows, seq, retained events and remembered requests of a ``MemoryStore``.
    private struct Contents {
        /// The rows and seq as committed (a ``CountriesState`` is made only when asked).
        var countries: [Country]
        var seq: UInt64 = 0
        /// The retained events, oldest first; `events[eventsHead...]` are live.
        var events: [Event] = []
        var eventsHead = 0
        /// The live resets' ``Event/estimatedBytes``, kept within ``retainedEventBytes``: only
        /// resets can be big (10,000 row events are at most 17.5 MB), and weighing every toggle's
        /// event cost the commit about 360 instructions.
        var resetBytes = 0
        let retainedEventBytes: Int
        /// Remembered requests, kept by count and age (the same rule as ``SQLiteStore``).
        var remembered: RememberedRequestLog

        init(countries: [Country], retention: RequestIDRetention, retainedEventBytes: Int) {
            self.countries = countries
            self.retainedEventBytes = retainedEventBytes
            remembered = RememberedRequestLog(retention: retention)
        }

        /// Mutating: the log keeps the id's fingerprint for its commit, and the call works on
        /// the contents in place, where a read of them around the look-up's opaque calls copied
        /// them whole (every table's reference retained and released) once per toggle.
        mutating func rememberedRequest(for id: String, nowMilliseconds now: @autoclosure () -> Int64)
            -> RememberedRequest?
        {
            remembered.request(for: id, nowMilliseconds: now())
        }

        func events(after since: UInt64, currentSeq: UInt64, limit: Int) -> [Event]? {
            if since > currentSeq { return nil }
            if since == currentSeq { return [] }
            let oldest = oldestRetainedSeq(currentSeq: currentSeq)
            guard since + 1 >= oldest else { return nil }
            // Seqs are consecutive, so the position of `since + 1` is known.
            let start = eventsHead + Int(since + 1 - oldest)
            return Array(events[start...].prefix(max(0, limit)))
        }

        /// Moves the oldest live event out, weighing it off if it is a reset.
        private mutating func forgetHead() {
            if case .reset = events[eventsHead].kind { resetBytes -= events[eventsHead].estimatedBytes }
            eventsHead += 1
        }

        func oldestRetainedSeq(currentSeq: UInt64) -> UInt64 {
            eventsHead < events.count ? events[eventsHead].seq : currentSeq + 1
        }

        mutating func commit(_ batch: StoreBatch, nowMilliseconds now: Int64) {
            for event in batch.events {
                // The handler made these events from a valid state: they apply as they are.
                switch event.kind {
                case .changed(let row): countries[row.index].visited = row.visited
                case .added(let row): countries.append(row.country)
                case .removed(let row): countries.remove(at: row.index)
                case .reset(let rows): countries = rows.map(\.country)
                }
                seq = event.seq
                if case .reset = event.kind { resetBytes += event.estimatedBytes }
                events.append(event)
            }
            if let last = batch.events.last {
                let keepFrom = Int64(last.seq) - Int64(Limits.retainedEvents)
                while eventsHead < events.count, Int64(events[eventsHead].seq) <= keepFrom {
                    forgetHead()
                }
                // Only big resets get here; the newest event is kept, however big. What is
                // trimmed for bytes is freed now: it is what is big.
                var trimmedForBytes = false
                while resetBytes > retainedEventBytes, eventsHead < events.count - 1 {
                    forgetHead()
                    trimmedForBytes = true
                }
                if eventsHead > Limits.retainedEvents || trimmedForBytes {
                    events.removeFirst(eventsHead)
                    eventsHead = 0
                }
            }
            for request in batch.requests { remembered.remember(request, nowMilliseconds: now) }
            remembered.forgetExpired(nowMilliseconds: now)
        }
    }
}
