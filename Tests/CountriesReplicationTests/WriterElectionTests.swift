import Testing

@testable import CountriesReplication

/// The election as etcd's `client/v3/concurrency` runs it, without etcd: a lease, a key, the
/// lowest create revision writes; a lease that is not renewed for its TTL makes no writer.
@Suite struct WriterElectionTests {
    private let start = ContinuousClock.now
    private let me = "tcp://10.0.0.1:5555"
    private let other = "tcp://10.0.0.2:5555"

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// A replica that has its lease (2 s) and key `writer/a` at revision 10.
    private func campaigned() -> WriterElection {
        var election = WriterElection(endpoint: me)
        #expect(election.nextStep(now: at(0)) == .grantLease)
        election.granted(lease: 7, ttlSeconds: 2, sentAt: at(0))
        #expect(election.nextStep(now: at(1)) == .campaign(lease: 7))
        election.campaigned(key: "writer/a", createRevision: 10)
        #expect(election.nextStep(now: at(2)) == .readWriter)
        return election
    }

    @Test func theLowestKeyWritesAndTheOthersFollowIt() {
        var election = campaigned()
        #expect(election.role(now: at(2)) == .unknown, "nothing read yet")
        election.read(writer: .init(key: "writer/a", endpoint: me, createRevision: 10), now: at(3))
        #expect(election.role(now: at(4)) == .writer)

        var follower = campaigned()
        follower.read(writer: .init(key: "writer/b", endpoint: other, createRevision: 5), now: at(3))
        #expect(follower.role(now: at(4)) == .follower(endpoint: other))
    }

    @Test func renewalsFallDueAThirdOfTheTTLAfterTheGrant() {
        var election = campaigned()
        election.read(writer: .init(key: "writer/a", endpoint: me, createRevision: 10), now: at(3))
        #expect(election.nextStep(now: at(100)) == .wait(until: at(503)))
        #expect(election.nextStep(now: at(700)) == .renew(lease: 7))
        election.renewed(ttlSeconds: 2, sentAt: at(700))
        #expect(election.role(now: at(2_500)) == .unknown, "the read of the writer is over a TTL old")
        election.read(writer: .init(key: "writer/a", endpoint: me, createRevision: 10), now: at(2_500))
        #expect(election.role(now: at(2_600)) == .writer, "renewed at 0.7 s: the lease lives to 2.7 s")
    }

    @Test func aWriterWhoseLeaseWasNotRenewedIsNoWriter() {
        var election = campaigned()
        election.read(writer: .init(key: "writer/a", endpoint: me, createRevision: 10), now: at(1_000))
        // Paused (SIGSTOP) or cut off: no renewal answered; the last read still names its key.
        election.renewalFailed(now: at(1_500))
        #expect(election.role(now: at(1_900)) == .writer)
        #expect(election.role(now: at(2_000)) == .unknown, "the lease's TTL has passed since its grant")
        #expect(election.nextStep(now: at(2_000)) == .grantLease, "a new lease, then a new key")
    }

    @Test func aLeaseEtcdNoLongerHasMeansANewLeaseAndKey() {
        var election = campaigned()
        election.read(writer: .init(key: "writer/a", endpoint: me, createRevision: 10), now: at(3))
        election.renewed(ttlSeconds: 0, sentAt: at(700))
        #expect(election.role(now: at(701)) == .unknown)
        #expect(election.nextStep(now: at(701)) == .grantLease)
        election.granted(lease: 8, ttlSeconds: 2, sentAt: at(710))
        #expect(election.nextStep(now: at(711)) == .campaign(lease: 8))
    }

    @Test func aKeyGoneFromEtcdIsPutAgain() {
        var election = campaigned()
        // Another replica's key, created after ours: ours must be gone (its lease ended in etcd).
        election.read(writer: .init(key: "writer/b", endpoint: other, createRevision: 12), now: at(3))
        #expect(election.nextStep(now: at(4)) == .grantLease)
        var alone = campaigned()
        alone.read(writer: nil, now: at(3))
        #expect(alone.nextStep(now: at(4)) == .grantLease)
        #expect(alone.role(now: at(4)) == .unknown)
    }

    @Test func aKeyNamingThisReplicaWithoutItsLeaseIsNoWriter() {
        // Its own key from before a restart (same endpoint, an old lease not yet expired).
        var election = campaigned()
        election.read(writer: .init(key: "writer/0", endpoint: me, createRevision: 3), now: at(3))
        #expect(election.role(now: at(4)) == .unknown, "neither writer nor following itself")
    }

    /// The writer's key is anyone's who can write under the prefix. Changes are forwarded only
    /// to a replica's command endpoint: `inproc://zeromq.zap.01` reached the ZAP handler of this
    /// very process, which answered no change, so every change was `unavailable`.
    @Test(arguments: [
        "inproc://zeromq.zap.01", "inproc://countries", "udp://10.0.0.2:5555", "", "10.0.0.2:5555",
        "tcp://10.0.0.2:5555\u{1B}[2J", "tcp://" + String(repeating: "a", count: 507),
    ])
    func aWriterKeyThatNamesNoCommandEndpointIsNotFollowed(_ endpoint: String) {
        var follower = campaigned()
        follower.read(writer: .init(key: "writer/b", endpoint: endpoint, createRevision: 5), now: at(3))
        #expect(follower.role(now: at(4)) == .unknown, "this replica commits its own changes")
    }

    @Test(arguments: [
        "tcp://10.0.0.2:5555", "tcp://[::1]:5555", "ipc:///run/countries/r2.sock",
        "tcp://" + String(repeating: "a", count: 506),
    ])
    func aReplicasCommandEndpointIsFollowed(_ endpoint: String) {
        var follower = campaigned()
        follower.read(writer: .init(key: "writer/b", endpoint: endpoint, createRevision: 5), now: at(3))
        #expect(follower.role(now: at(4)) == .follower(endpoint: endpoint))
    }
}
