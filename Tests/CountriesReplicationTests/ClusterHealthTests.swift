import Testing

@testable import CountriesReplication

/// When a replica says it has no quorum: after `quorumTimeout` with neither a quorum read nor a
/// commit, since either took a majority (docs/HA.md, "Losing the quorum").
struct ClusterHealthTests {
    private let timeout = Duration.seconds(5)

    @Test func silenceLongerThanTheTimeoutIsNoQuorum() {
        let health = ClusterHealth(quorumTimeout: timeout)
        let start = ContinuousClock.now
        #expect(health.unavailability(now: start) == nil)
        let message = health.unavailability(now: start + timeout + .seconds(1))
        #expect(message?.contains("no quorum") == true)
    }

    @Test func theLeaderLastSeenIsUnknownWithoutAQuorum() {
        let health = ClusterHealth(quorumTimeout: timeout)
        let start = ContinuousClock.now
        #expect(health.leaderShown(now: start) == "none")
        var cluster = ClusterHealth.Cluster()
        cluster.leader = "m1"
        health.record(cluster)
        #expect(health.leaderShown(now: start) == "m1")
        // etcd gone quiet: the member last seen leading may be the one that went away.
        #expect(health.leaderShown(now: start + timeout + .seconds(1)) == "unknown")
        health.recordQuorum(at: start + timeout + .seconds(2), seq: 1)
        #expect(health.leaderShown(now: start + timeout + .seconds(2)) == "m1")
    }

    @Test func aCommitIsAQuorumFromWhenItWasSent() {
        let health = ClusterHealth(quorumTimeout: timeout)
        let sent = ContinuousClock.now + .seconds(10)  // unscaled: a time given to the health, not waited
        health.recordCommitted(7, sentAt: sent)
        #expect(health.unavailability(now: sent + timeout - .milliseconds(1)) == nil)
        #expect(health.unavailability(now: sent + timeout + .seconds(1)) != nil)
        // The probe's seq, not the commit's: a commit racing the probe's read would make that
        // read look like the store gone back, and replaced.
        #expect(health.latestSeq == 0)
    }

    @Test func anOlderCommitDoesNotMoveTheLastQuorumBack() {
        let health = ClusterHealth(quorumTimeout: timeout)
        let read = ContinuousClock.now + .seconds(10)  // unscaled: a time given to the health, not waited
        health.recordQuorum(at: read, seq: 9)
        health.recordCommitted(8, sentAt: read - .seconds(4))
        #expect(health.unavailability(now: read + timeout - .milliseconds(1)) == nil)
        #expect(health.latestSeq == 9)
    }
}
