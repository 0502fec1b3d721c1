import CountriesCore
import Testing

@testable import CountriesStore

/// The one rule that says which ids a store of one process keeps.
@Suite struct RequestIDRetentionTests {
    private func retention(count: Int, bytes: Int = 10, at milliseconds: (Int) -> Int64) -> RequestIDRetention
    {
        var retention = RequestIDRetention()
        retention.minimumCount = 3
        retention.maximumCount = 6
        retention.maximumBytes = 100
        for number in 0..<count {
            retention.remember(
                ordinal: Int64(number + 1), id: "\(number)", bytes: bytes, milliseconds: milliseconds(number))
        }
        return retention
    }

    @Test func nothingGoesWhileYoungAndUnderTheMaximum() {
        let young = retention(count: 5) { _ in 1_000 }
        #expect(young.forgettable(nowMilliseconds: 2_000).count == 0)
        #expect(young.keeps(ordinal: 1, nowMilliseconds: 2_000))
    }

    @Test func oldIdsGoDownToTheCountFloor() {
        let old = retention(count: 5) { _ in 0 }
        let later: Int64 = 600_000
        #expect(old.forgettable(nowMilliseconds: later - 1).count == 0)
        #expect(old.forgettable(nowMilliseconds: later) == (2, false))
        #expect(!old.keeps(ordinal: 2, nowMilliseconds: later))
        #expect(old.keeps(ordinal: 3, nowMilliseconds: later))
        #expect(old.ordinalForgotten(through: 2) == 2)
    }

    @Test func onlyTheOldPrefixGoes() {
        // Ids 0 and 1 are old, 2 to 4 young: only the old ones may go, though more are over the
        // floor.
        let mixed = retention(count: 5) { $0 < 2 ? 0 : 500_000 }
        #expect(mixed.forgettable(nowMilliseconds: 600_000) == (2, false))
    }

    @Test func theMaximumsHoldForYoungIds() {
        let many = retention(count: 6) { _ in 1_000 }
        #expect(many.forgettable(nowMilliseconds: 1_000, adding: 2, addingBytes: 20) == (2, true))
        let heavy = retention(count: 4, bytes: 30) { _ in 1_000 }
        #expect(heavy.forgettable(nowMilliseconds: 1_000) == (1, true), "120 bytes > 100")
    }

    /// What a maximum forces out while younger than the age floor is counted (a retry of it
    /// would be applied again): the store's warning and metric read it. Old ids are not.
    @Test func idsForgottenYoungAreCounted() {
        var many = retention(count: 6) { $0 < 2 ? 0 : 300_000 }
        let now: Int64 = 600_000
        let (count, required) = many.forgettable(nowMilliseconds: now, adding: 3, addingBytes: 30)
        #expect(count == 3 && required)
        _ = many.forget(count, nowMilliseconds: now)
        #expect(many.forgottenYoung == 1, "ids 0 and 1 were old, id 2 young")
        _ = many.forget(1, nowMilliseconds: now)
        #expect(many.forgottenYoung == 2)
        _ = many.forget(1, nowMilliseconds: 900_000)
        #expect(many.forgottenYoung == 2, "old by then")
    }

    @Test func aClockThatStepsBackKeepsTheOrder() {
        var stepped = retention(count: 3) { _ in 0 }
        stepped.remember(ordinal: 4, id: "late", bytes: 10, milliseconds: -5_000_000)
        // The late id counts as remembered at 0, like the one before it: all four old, one over the
        // floor.
        #expect(stepped.forgettable(nowMilliseconds: 600_000) == (1, false))
    }

    @Test func forgettingReturnsTheOldestAndFreesTheirBytes() {
        var old = retention(count: 5) { _ in 0 }
        let gone = old.forget(2, nowMilliseconds: 600_000)
        #expect(gone.map(\.id) == ["0", "1"])
        #expect(old.count == 3)
        #expect(old.bytes == 30)
        #expect(!old.keeps(ordinal: 1, nowMilliseconds: 0))
        #expect(old.keeps(ordinal: 3, nowMilliseconds: 0))
    }

    /// A store's table loses the ids forgotten, but not one remembered again since (the table
    /// holds it under a later ordinal), nor ids not forgotten yet.
    @Test func forgettingTakesIdsOutOfAStoresTableUnlessRememberedAgain() {
        var retention = retention(count: 4) { _ in 0 }
        retention.remember(ordinal: 5, id: "1", bytes: 10, milliseconds: 0)  // "1" used again
        var table: [String: Int64] = ["0": 1, "1": 5, "2": 3, "3": 4]
        retention.forget(2, nowMilliseconds: 600_000, from: &table) { $0 }
        #expect(table == ["1": 5, "2": 3, "3": 4])
        #expect(retention.count == 3)
    }

    /// A store that keeps its ids itself gives none: the rule is the same, the entries hold no
    /// string.
    @Test func idsRememberedWithoutTheirStringFollowTheSameRule() {
        let named = retention(count: 5) { _ in 0 }
        var anonymous = RequestIDRetention()
        anonymous.minimumCount = 3
        anonymous.maximumCount = 6
        anonymous.maximumBytes = 100
        for number in 0..<5 { anonymous.remember(ordinal: Int64(number + 1), bytes: 10, milliseconds: 0) }
        #expect(anonymous.bytes == named.bytes)
        #expect(
            anonymous.forgettable(nowMilliseconds: 600_000) == named.forgettable(nowMilliseconds: 600_000))
        #expect(anonymous.forget(2, nowMilliseconds: 600_000).map(\.id) == ["", ""])
        #expect(anonymous.count == 3)
    }
}
