import Testing

@testable import CountriesReplication

/// A read below the highest revision seen is stale until reads stay there: then the store
/// went back (a restore), and the probe judges the seq as before.
struct RevisionFloorTests {
    @Test func readsAtOrPastTheHighestAreCurrent() {
        var floor = RevisionFloor()
        #expect(floor.judge(10) == .current)
        #expect(floor.judge(10) == .current)
        #expect(floor.judge(12) == .current)
        #expect(floor.highest == 12)
    }

    @Test func aReadFromBehindIsStaleAndForgottenOnceTheReadsCatchUp() {
        var floor = RevisionFloor()
        _ = floor.judge(100)
        #expect(floor.judge(99) == .stale)
        #expect(floor.judge(98) == .stale)
        #expect(floor.judge(101) == .current)
        // The count starts again: two more stale reads are still stale.
        #expect(floor.judge(100) == .stale)
        #expect(floor.judge(100) == .stale)
        #expect(floor.highest == 101)
    }

    @Test func readsThatStayBehindAreTheStoreGoingBack() {
        var floor = RevisionFloor()
        _ = floor.judge(500)
        let verdicts = (0..<RevisionFloor.readsBeforeBelieved).map { _ in floor.judge(40) }
        #expect(verdicts == [.stale, .stale, .wentBack])
        // From there on, the lower history is the one read.
        #expect(floor.highest == 40)
        #expect(floor.judge(41) == .current)
    }
}
