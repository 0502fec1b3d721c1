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
}
