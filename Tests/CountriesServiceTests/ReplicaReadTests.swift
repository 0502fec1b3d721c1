import CountriesCore
import Foundation
import TestSupport
import Testing

@testable import CountriesService

/// Reads on replicas of one etcd store: held for their batch's commit, or alone, a read never
/// returns a state older than a change another replica acknowledged before it was sent
/// (docs/HA.md, "Reads").
@Suite(.serialized, .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct ReplicaReadTests {
    private let seed = SeedList.standard

    @Test func readsOnAReplicaBehindSeeTheOtherReplicasChangesWithOrWithoutChangesBesideThem() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let writer = try makeHandler(on: try cluster.replicaStore(prefix: "/reads/", seed: seed))
        let behind = try makeHandler(on: try cluster.replicaStore(prefix: "/reads/", seed: seed))
        #expect(try writer.replies(to: [#"{"op":"toggle","name":"Italy","id":"w-1"}"#]).first?.seq == 1)

        // Held for the change after it: its commit is refused (the store moved), caught up
        // from the refusal, committed again, and the read answered from what it left.
        var replies = try behind.replies(to: [
            ("r", #"{"op":"get","name":"Italy"}"#), ("a", #"{"op":"toggle","name":"France","id":"b-1"}"#),
            ("c", #"{"op":"count"}"#),
        ])
        #expect(replies.map(\.peer) == ["a", "r", "c"])
        #expect(replies[0].reply.seq == 2)
        #expect(replies[1].reply.seq == 2 && replies[1].reply.country?.visited == true, "\(replies[1])")
        #expect(replies[2].reply.seq == 2)

        // Alone: the read catches up first.
        #expect(try writer.replies(to: [#"{"op":"toggle","name":"Spain","id":"w-2"}"#]).first?.seq == 3)
        replies = try behind.replies(to: [("r", #"{"op":"get","name":"Spain"}"#)])
        #expect(replies.first?.reply.seq == 3 && replies.first?.reply.country?.visited == true)

        // After a commit that wrote nothing (France is visited already): caught up as well.
        #expect(try writer.replies(to: [#"{"op":"toggle","name":"Moldova","id":"w-3"}"#]).first?.seq == 4)
        replies = try behind.replies(to: [
            ("n", #"{"op":"set","name":"France","visited":true}"#), ("r", #"{"op":"get","name":"Moldova"}"#),
        ])
        #expect(replies.map(\.peer) == ["n", "r"])
        #expect(replies[1].reply.seq == 4 && replies[1].reply.country?.visited == true, "\(replies[1])")
    }
}
