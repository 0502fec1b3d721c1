import CountriesCore
import Etcd
import Foundation
import TestSupport
import Testing

@testable import CountriesService

/// The etcd store against a real etcd member: seeding once, the snapshot cadence, the event
/// window, and the request-id memory kept to the protocol's window (docs/HA.md).
@Suite(.serialized, .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct EtcdStoreTests {
    private let logger = Logger(level: .error) { _ in }

    private func open(_ cluster: EtcdCluster, prefix: String) throws -> EtcdStore {
        let configuration = EtcdConfiguration(endpoints: cluster.clientURLs, prefix: prefix, replicaName: "t")
        return try EtcdStore(
            configuration: configuration, seed: SeedList.standard,
            health: ClusterHealth(quorumTimeout: .seconds(5)),
            logger: logger)
    }

    @Test func theFirstReplicaSeedsAndTheOthersFindTheSameStore() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let first = try open(cluster, prefix: "/a/")
        let second = try open(cluster, prefix: "/a/")
        let other = try open(cluster, prefix: "/b/")
        #expect(first.seeded && !second.seeded && other.seeded)
        #expect(first.identity == second.identity && first.identity != other.identity)
        #expect(try second.loadState() == CountriesState(countries: SeedList.standard))
    }

    /// 250 toggles in batches: the state read back (snapshot plus the events after it) is the
    /// state committed, and a stale basis is refused as `moved`.
    @Test func commitsSnapshotsAndAStaleBasisIsMoved() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let store = try open(cluster, prefix: "/c/")
        var state = try store.loadState()
        for round in 0..<50 {
            var batch = StoreBatch()
            batch.basis = state.seq
            for step in 0..<5 {
                var result = try state.apply(.toggle(.index((round + step) % 8)), seed: SeedList.standard)
                result.event?.store = store.identity
                batch.events.append(try #require(result.event))
            }
            batch.state = state
            try store.commit(batch)
        }
        #expect(state.seq == 250)
        #expect(try store.loadState() == state)
        #expect(try store.catchUp(CountriesState(countries: SeedList.standard)) == state)

        var stale = StoreBatch()
        stale.basis = 249
        stale.requests = [RememberedRequest(id: "x", request: Data("{}".utf8), reply: Data("{}".utf8))]
        #expect(throws: StateStoreError.self) { try store.commit(stale) }
        do {
            try store.commit(stale)
        } catch {
            #expect(error.code == .moved)
        }
    }

    @Test func rememberedRequestsAreKeptToTheWindowOldestFirst() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let store = try open(cluster, prefix: "/r/")
        for id in 0..<30 {
            var batch = StoreBatch()
            batch.basis = 0
            batch.requests = [
                RememberedRequest(id: "id-\(id)", request: nil, reply: Data("{\"n\":\(id)}".utf8))
            ]
            try store.commit(batch)
        }
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let layout = EtcdLayout(prefix: "/r/")
        #expect(
            try EtcdStore.trimRememberedRequests(client: client, layout: layout, keeping: 20, batch: 1_000)
                == 10)
        #expect(try EtcdStore.trimRememberedRequests(client: client, layout: layout, keeping: 20) == 0)
        #expect(try store.rememberedRequest(for: "id-9") == nil)
        #expect(try store.rememberedRequest(for: "id-10")?.reply == Data("{\"n\":10}".utf8))
        #expect(try store.rememberedRequest(for: "id-29") != nil)
    }
}
