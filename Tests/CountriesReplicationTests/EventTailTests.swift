import Testing

@testable import CountriesReplication

/// Replicas spread their watches over the members: names that differ in one character, as
/// scripts/cluster's `r1` and `r2` do, watch through different members.
@Suite struct EventTailTests {
    @Test func replicasNamedAlikeWatchThroughDifferentMembers() {
        let members = ["r1", "r2", "r3"].map { EventTail.preferredMember($0, among: 3) }
        #expect(Set(members).count == 3, "\(members)")
        #expect(EventTail.preferredMember("r1", among: 3) == EventTail.preferredMember("r1", among: 3))
        #expect(EventTail.preferredMember("anything", among: 1) == 0)
        #expect(EventTail.preferredMember("", among: 0) == 0)
    }
}
