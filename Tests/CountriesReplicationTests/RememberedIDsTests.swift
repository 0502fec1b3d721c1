import Foundation
import Testing

@testable import CountriesReplication

/// A replica's memory of the remembered ids (``RememberedIDs``), without etcd: the first place
/// an id is known stays, generations are forgotten whole, and how far it is complete only
/// moves forward.
@Suite struct RememberedIDsTests {
    private typealias Entry = RememberedIDs.Entry

    @Test func theFirstPlaceOfAnIDStays() {
        var ids = RememberedIDs()
        ids.learn(["a"], generation: 1, logSeq: 4)
        ids.reached(4)
        ids.learn(["a", "b"], generation: 2, logSeq: 6)
        ids.learn(["c"], generation: 2, logSeq: nil)
        #expect(ids.entries["a"] == Entry(generation: 1, logSeq: 4))
        let found = ids.remembered(among: ["b", "x", "a", "b", "c"])
        #expect(found.map(\.id) == ["b", "a", "c"])
        #expect(
            found.map(\.entry) == [
                Entry(generation: 2, logSeq: 6), Entry(generation: 1, logSeq: 4),
                Entry(generation: 2, logSeq: nil),
            ])
        ids.forget("a")
        #expect(ids.remembered(among: ["a"]).isEmpty)
    }

    @Test func aWholeBatchOfRetriesIsFoundEachOnceInOrder() {
        var ids = RememberedIDs()
        let batch = (0..<256).map { "retry-\($0)" }
        ids.learn(batch, generation: 3, logSeq: 9)
        let asked = batch.reversed() + batch + ["unknown"]
        let found = ids.remembered(among: asked)
        #expect(found.map(\.id) == batch.reversed())
        #expect(found.allSatisfy { $0.entry == Entry(generation: 3, logSeq: 9) })
    }

    @Test func howFarItIsCompleteOnlyMovesForward() {
        var ids = RememberedIDs()
        #expect(ids.knownThrough == nil)
        ids.reached(9)
        ids.reached(3)
        #expect(ids.knownThrough == 9)
        ids.learn(["a"], generation: 1, logSeq: 2)
        ids.reset()
        #expect(ids.knownThrough == nil && ids.entries.isEmpty)
    }

    @Test func generationsAreForgottenWhole() {
        var ids = RememberedIDs()
        ids.learn(["a", "b"], generation: 3, logSeq: 1)
        ids.learn(["c"], generation: 4, logSeq: 3)
        ids.learn(["d"], generation: 5, logSeq: 4)
        ids.forget(before: 4)
        #expect(Set(ids.entries.keys) == ["c", "d"])
        ids.forget(before: 4)
        #expect(ids.entries.count == 2)
        ids.forget(before: 6)
        #expect(ids.entries.isEmpty)
    }

    /// What a generation's entries in the id log hold: each entry counted once however often
    /// it is learned, ids in keys of their own not at all (the generation's key counts them),
    /// and forgotten with the generation.
    @Test func aGenerationsTallyCountsEachEntryOnce() {
        var ids = RememberedIDs()
        ids.learn(["a", "b"], generation: 3, logSeq: 1, bytes: 40)
        ids.learn(["a", "b"], generation: 3, logSeq: 1, bytes: 40)
        ids.learn(["c"], generation: 3, logSeq: nil)
        ids.learn(["d"], generation: 4, logSeq: 3, bytes: 25)
        #expect(ids.tally(of: 3) == RememberedIDs.Tally(count: 2, bytes: 40))
        #expect(ids.tally(of: 4) == RememberedIDs.Tally(count: 1, bytes: 25))
        ids.forget(before: 4)
        #expect(ids.tally(of: 3) == RememberedIDs.Tally())
        ids.reset()
        #expect(ids.tally(of: 4) == RememberedIDs.Tally())
    }
}
