import CountriesCore
import Foundation
import SQLite
import SystemSupport
import Testing

@testable import CountriesService
@testable import CountriesStore

/// The contract both in-memory stores keep: ``MemoryStore`` (what `--in-memory` uses) and the
/// SQLite `:memory:` ``SQLiteStore``. A service runs on the latter with `storePath = ":memory:"`.
@Suite struct StateStoreContractTests {
    enum Kind: String, CaseIterable, Sendable { case memory, sqlite }

    private let seed = SeedList.standard

    /// A store that keeps ids by count only, unless a `clock` makes ages count.
    private func make(_ kind: Kind, clock: TestClock? = nil) throws -> any StateStore {
        let retention = clock == nil ? RequestIDRetention.countOnly : RequestIDRetention()
        let now = (clock ?? TestClock(hoursAhead: 0)).now
        switch kind {
        case .memory: return MemoryStore(seed: seed, retention: retention, clock: now)
        case .sqlite: return try SQLiteStore(path: nil, seed: seed, retention: retention, clock: now)
        }
    }

    /// Commits one id per batch, `r-<from>` to `r-<to - 1>`.
    private func rememberIDs(_ range: Range<Int>, on store: any StateStore) throws {
        for number in range {
            var one = StoreBatch()
            one.requests = [RememberedRequest(id: "r-\(number)", reply: Array([1]))]
            try store.commit(one)
        }
    }

    /// Kept events are bounded in bytes as well as in number: big resets push the oldest out,
    /// `history` says so, and the newest event is always there.
    @Test(arguments: Kind.allCases)
    func keptEventsAreBoundedInBytes(kind: Kind) throws {
        let long = (0..<200).map {
            Country(name: "Country \($0) " + String(repeating: "y", count: 60), visited: false)
        }
        let budget = 100_000
        let store: any StateStore =
            switch kind {
            case .memory: MemoryStore(seed: long, retainedEventBytes: budget)
            case .sqlite: try SQLiteStore(path: nil, seed: long, retainedEventBytes: budget)
            }
        var state = CountriesState(countries: long)
        for _ in 0..<30 {
            var batch = StoreBatch()
            for change in [Change.reset, .toggle(.index(3))] {
                if let event = try state.apply(change, seed: long).event { batch.events.append(event) }
            }
            try store.commit(batch)
            let oldest = try store.oldestRetainedSeq(currentSeq: state.seq)
            let kept = try #require(
                try store.events(after: oldest - 1, currentSeq: state.seq, limit: 100_000))
            #expect(kept.last?.seq == state.seq, "the newest event is kept")
            let bytes = kept.reduce(0) { $0 + $1.estimatedBytes }
            #expect(bytes <= budget + budget / 2 + 2 * 15_000, "\(kind): \(bytes) bytes of events kept")
        }
        let oldest = try store.oldestRetainedSeq(currentSeq: state.seq)
        #expect(oldest > 40, "\(kind): the old resets went (oldest \(oldest))")
        #expect(try store.events(after: 0, currentSeq: state.seq, limit: 10) == nil)
    }

    /// Ids younger than the age floor outlast the count floor: a burst of changes pushes no id
    /// out that a client may still retry. Once old, they go down to the count again.
    @Test(arguments: Kind.allCases)
    func youngIDsAreKeptBeyondTheCount(kind: Kind) throws {
        let clock = TestClock(hoursAhead: 0)
        let store = try make(kind, clock: clock)
        let total = Limits.retainedRequestIDs + 2_000
        try rememberIDs(0..<total, on: store)
        #expect(try store.rememberedReply(for: "r-0") == Array([1]), "an id of this minute is kept")
        clock.advance(by: Limits.requestIDMinimumAge - .seconds(1))
        #expect(try store.rememberedReply(for: "r-0") == Array([1]), "not old yet")
        clock.advance(by: .seconds(1))
        #expect(try store.rememberedReply(for: "r-0") == nil, "old, and beyond the newest 10,000")
        #expect(try store.rememberedReply(for: "r-1999") == nil)
        #expect(try store.rememberedReply(for: "r-2000") == Array([1]), "among the newest 10,000")
        try rememberIDs(total..<total + 300, on: store)
        #expect(try store.rememberedReply(for: "r-2299") == nil)
        #expect(try store.rememberedReply(for: "r-2300") == Array([1]))
    }

    /// However young, ids are kept up to a maximum in count and in bytes: a burst is bounded.
    @Test(arguments: Kind.allCases)
    func aBurstIsBoundedByTheMaximum(kind: Kind) throws {
        var retention = RequestIDRetention()
        retention.minimumCount = 10
        retention.maximumCount = 40
        retention.maximumBytes = 1_000
        let clock = TestClock(hoursAhead: 0)
        let store: any StateStore =
            switch kind {
            case .memory: MemoryStore(seed: seed, retention: retention, clock: clock.now)
            case .sqlite: try SQLiteStore(path: nil, seed: seed, retention: retention, clock: clock.now)
            }
        try rememberIDs(0..<100, on: store)
        #expect(try store.rememberedReply(for: "r-59") == nil)
        #expect(try store.rememberedReply(for: "r-60") == Array([1]), "the newest 40")
        var big = StoreBatch()
        big.requests = [RememberedRequest(id: "big", reply: Array(repeating: 7, count: 900))]
        try store.commit(big)
        #expect(try store.rememberedReply(for: "big")?.count == 900)
        // 903 bytes and 19 ids of 5 bytes fit in 1,000.
        #expect(try store.rememberedReply(for: "r-80") == nil, "1,000 bytes hold the big reply and 19 ids")
        #expect(try store.rememberedReply(for: "r-81") == Array([1]))
        // Every id went young (the clock never moved): the store says how many, for the warning
        // and the metric. SQLite deletes the ids past the count in trims, so it may lag by one.
        #expect(store.requestIDsForgottenYoung >= 60 && store.requestIDsForgottenYoung <= 81)
    }

    /// Ids that go because they are old are not counted as forgotten young.
    @Test(arguments: Kind.allCases)
    func oldIdsForgottenAreNotCountedAsYoung(kind: Kind) throws {
        let clock = TestClock(hoursAhead: 0)
        let store = try make(kind, clock: clock)
        try rememberIDs(0..<20, on: store)
        clock.advance(by: .seconds(601))
        try rememberIDs(20..<10_100, on: store)
        #expect(store.requestIDsForgottenYoung == 0)
    }

    private func batch(_ changes: [Change], on state: inout CountriesState) throws -> StoreBatch {
        var batch = StoreBatch()
        for change in changes {
            if let event = try state.apply(change, seed: seed).event { batch.events.append(event) }
        }
        return batch
    }

    @Test(arguments: Kind.allCases)
    func theStateAfterCommitsIsWhatWasCommitted(kind: Kind) throws {
        let store = try make(kind)
        var state = CountriesState(countries: seed)
        #expect(try store.loadState() == state)
        try store.commit(try batch([.toggle(.index(2)), .add(name: "Fiji", visited: true)], on: &state))
        try store.commit(try batch([.remove(.index(0)), .set(.name("fiji"), visited: false)], on: &state))
        #expect(try store.loadState() == state)
        try store.commit(try batch([.reset, .toggle(.index(1))], on: &state))
        #expect(try store.loadState() == state)
        #expect(state.seq == 6)
        #expect(try store.events(after: 0, currentSeq: 6)?.map(\.seq) == [1, 2, 3, 4, 5, 6])
        #expect(
            try store.events(after: 4, currentSeq: 6)?.map(\.topic) == [.countriesReset, .countryChanged])
        #expect(try store.oldestRetainedSeq(currentSeq: 6) == 1)
        #expect(try make(kind).oldestRetainedSeq(currentSeq: 0) == 1, "nothing kept yet")
    }

    @Test(arguments: Kind.allCases)
    func eventsAreTrimmedToTheRetainedNumberAndTheHistoryBoundaryHolds(kind: Kind) throws {
        let store = try make(kind)
        var state = CountriesState(countries: seed)
        let total = Limits.retainedEvents + 5
        try store.commit(try batch(Array(repeating: .toggle(.index(1)), count: total - 1), on: &state))
        try store.commit(try batch([.toggle(.index(1))], on: &state))
        let current = state.seq
        let oldest = try store.oldestRetainedSeq(currentSeq: current)
        #expect(oldest == 6)
        let kept = try #require(try store.events(after: oldest - 1, currentSeq: current))
        #expect(kept.count == Limits.retainedEvents)
        #expect(kept.first?.seq == oldest)
        #expect(kept.last?.seq == current)
        #expect(try store.events(after: oldest - 2, currentSeq: current) == nil)
        #expect(try store.events(after: current - 1, currentSeq: current)?.map(\.seq) == [current])
        #expect(try store.events(after: current, currentSeq: current) == [])
        #expect(try store.events(after: current + 1, currentSeq: current) == nil)
        // Many more single commits: the ring keeps its bound.
        for _ in 0..<(2 * Limits.retainedEvents + 7) {
            try store.commit(try batch([.toggle(.index(3))], on: &state))
        }
        #expect(
            try store.oldestRetainedSeq(currentSeq: state.seq) == state.seq - UInt64(Limits.retainedEvents)
                + 1)
        #expect(
            try store.events(after: state.seq - 2, currentSeq: state.seq)?.map(\.seq) == [
                state.seq - 1, state.seq,
            ])
    }

    @Test(arguments: Kind.allCases)
    func requestIDsAreTrimmedToTheRetainedNumber(kind: Kind) throws {
        let store = try make(kind)
        let total = Limits.retainedRequestIDs + 3
        var first = StoreBatch()
        first.requests = (0..<total - 1).map {
            RememberedRequest(id: "id-\($0)", reply: Array("reply \($0)".utf8))
        }
        try store.commit(first)
        var last = StoreBatch()
        last.requests = [RememberedRequest(id: "id-\(total - 1)", reply: Array("reply \(total - 1)".utf8))]
        try store.commit(last)
        for gone in 0..<3 {
            #expect(try store.rememberedReply(for: "id-\(gone)") == nil)
        }
        #expect(try store.rememberedReply(for: "id-3") == Array("reply 3".utf8))
        #expect(try store.rememberedReply(for: "id-\(total - 1)") == Array("reply \(total - 1)".utf8))
        for round in 0..<(2 * Limits.retainedRequestIDs) {
            var one = StoreBatch()
            one.requests = [RememberedRequest(id: "r-\(round)", reply: Array([1]))]
            try store.commit(one)
        }
        #expect(try store.rememberedReply(for: "id-\(total - 1)") == nil)
        #expect(try store.rememberedReply(for: "r-\(Limits.retainedRequestIDs - 1)") == nil)
        #expect(try store.rememberedReply(for: "r-\(Limits.retainedRequestIDs)") == Array([1]))
    }

    @Test(arguments: Kind.allCases)
    func theHandlerOnEitherStore(kind: Kind) throws {
        let store = try make(kind)
        let handler = try makeHandler(on: store, seed: seed)
        let bodies = [
            #"{"op":"toggle","index":2,"id":"x"}"#, #"{"op":"add","name":"Laos"}"#,
            #"{"op":"toggle","index":2,"id":"x"}"#,
            #"{"op":"history","since":0}"#,
        ]
        let replies = handler.handled(bodies: bodies).replies.map { Data($0.body) }
        #expect(replies.count == 4)
        #expect(replies[0] == replies[2], "the retry gets the first reply")
        #expect(try Reply.decode(replies[3]).events?.map(\.seq) == [1, 2])
        #expect(try store.loadState() == handler.state)
        #expect(try store.rememberedReply(for: "x") == Array(replies[0]))
        #expect(try store.rememberedRequest(for: "x")?.request == Change.toggle(.index(2)).canonicalForm)
    }
}
