import CountriesCore
import CountriesReplication
import Foundation
import SystemSupport
import Testing
import ZeroMQ

@testable import CountriesReplication
@testable import CountriesService

/// A replica's link before anything runs: it contacts nobody until started, is no follower
/// before its election has run, and holds heartbeats for each thing its cluster's health says.
@Suite struct ReplicaLinkTests {
    private let logger = Logger(level: .error) { _ in }

    private func makeLink(health: ClusterHealth, context: Context) throws -> ReplicaLink {
        // A port nothing listens on: nothing may be asked of it before `start()`.
        let etcd = EtcdConfiguration(endpoints: ["http://127.0.0.1:9"], replicaName: "r1")
        return try ReplicaLink(
            etcd: etcd, health: health, loadedSeq: 7, seed: SeedList.standard, storeIdentity: "store-a",
            probeInterval: .milliseconds(500), commandEndpoint: "tcp://127.0.0.1:5555", context: context,
            security: nil, logger: logger)
    }

    @Test func aHealthyReplicaHoldsNothingAndIsNoFollowerBeforeItsElection() throws {
        let context = try Context()
        defer { context.terminate() }
        let link = try makeLink(health: ClusterHealth(quorumTimeout: .seconds(3_600)), context: context)
        defer { link.forwarder.close() }
        #expect(link.heartbeatHold() == nil)
        #expect(!link.isFollower)
    }

    @Test func heartbeatsAreHeldForNoQuorumADamagedLogAndATrailingPublication() throws {
        let context = try Context()
        defer { context.terminate() }

        let noQuorum = ClusterHealth(quorumTimeout: .zero)
        let first = try makeLink(health: noQuorum, context: context)
        defer { first.forwarder.close() }
        #expect(first.heartbeatHold()?.contains("no quorum") == true)

        let damaged = ClusterHealth(quorumTimeout: .seconds(3_600))
        let second = try makeLink(health: damaged, context: context)
        defer { second.forwarder.close() }
        damaged.recordDamage("the value at seq 9 does not decode")
        #expect(second.heartbeatHold()?.contains("seq 9 does not decode") == true)
        damaged.recordLogReadable()
        #expect(second.heartbeatHold() == nil)

        // Seq 8 known committed, published only through 7 a minute later: the publication trails.
        let trailing = ClusterHealth(quorumTimeout: .seconds(3_600))
        let third = try makeLink(health: trailing, context: context)
        defer { third.forwarder.close() }
        trailing.recordPublished(7)
        trailing.recordCommitted(8, sentAt: .now)
        let later = ContinuousClock.now + .seconds(60)  // unscaled: an instant given to the check, not a wait
        #expect(third.heartbeatHold(now: later) != nil)
        trailing.recordPublished(8)
        #expect(third.heartbeatHold(now: later) == nil)
    }
}
