import Foundation
import Testing

@testable import CountriesService

@Suite struct CommitCohortTests {
    let a = Data("a".utf8)
    let b = Data("b".utf8)
    let c = Data("c".utf8)

    @Test func theFirstBatchNeverWaits() {
        #expect(CommitCohort().missing(from: [a]) == nil)
    }

    @Test func aLoneClientBackAlreadyNeverWaits() {
        var cohort = CommitCohort()
        cohort.committed(peers: [a], took: .milliseconds(3))
        #expect(cohort.missing(from: [a]) == nil)
    }

    @Test func theOtherHalfOfTheLastCohortIsAwaitedForHalfTheLastCommit() throws {
        var cohort = CommitCohort()
        cohort.committed(peers: [a, b], took: .milliseconds(3))
        let found = try #require(cohort.missing(from: [c, a]))
        #expect(found.requests == [b: 1])
        #expect(found.wait == .microseconds(1_500))
    }

    @Test func noWaitIsLongerThanTheLongest() throws {
        var cohort = CommitCohort()
        cohort.committed(peers: [a], took: .seconds(1))
        #expect(try #require(cohort.missing(from: [b])).wait == CommitCohort.longestWait)
    }

    @Test func aCommitThatTookNoTimeLeavesNothingToWaitFor() {
        var cohort = CommitCohort()
        cohort.committed(peers: [a], took: .zero)
        #expect(cohort.missing(from: [b]) == nil)
    }

    @Test func eachCommitReplacesTheCohort() {
        var cohort = CommitCohort()
        cohort.committed(peers: [a, b], took: .milliseconds(1))
        cohort.committed(peers: [c], took: .milliseconds(1))
        #expect(cohort.answered == [c: 1])
        #expect(cohort.missing(from: [c]) == nil)
    }

    /// A replica that forwards its clients' changes to the writer is one peer with as many
    /// requests as it forwarded: the batch waits for all of them, not for the first (its
    /// clients were a commit behind the writer's own, in batches of about 13 of 16).
    @Test func aForwardingReplicaIsAwaitedForEachRequestItForwarded() throws {
        var cohort = CommitCohort()
        cohort.committed(peers: [a, b, b, b], took: .milliseconds(4))
        var found = try #require(cohort.missing(from: [a, b]))
        #expect(found.requests == [b: 2])
        found.received(from: b)
        #expect(!found.isComplete)
        found.received(from: c)
        found.received(from: b)
        #expect(found.isComplete)
        #expect(cohort.missing(from: [b, a, b, b]) == nil)
    }
}
