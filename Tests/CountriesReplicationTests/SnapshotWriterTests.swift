import CountriesCore
import CountriesStore
import Etcd
import Foundation
import SystemSupport
import TestSupport
import Testing

@testable import CountriesReplication

/// The snapshot is written apart from the commits, and not more often than its spacing: at
/// thousands of changes a second, a snapshot every 100 seqs was a quarter of etcd's
/// transactions (docs/BENCHMARKS.md, "Stop 40").
@Suite(.serialized, .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct SnapshotWriterTests {
    @Test func writesStartASpacingApartAndOnlyTheNewestWaitingIsWritten() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let configuration = EtcdConfiguration(
            endpoints: cluster.clientURLs, prefix: "/spaced/", replicaName: "t")
        // Long enough that the two states below are handed over while the writer waits, on
        // the slowest run.
        let spacing = Duration.seconds(2) * testSlowdown
        let identity = StoreIdentity.make()
        _ = try EtcdClient(endpoints: cluster.clientURLs).txn(
            compare: [], success: [.put(EtcdLayout(prefix: "/spaced/").store, Data(identity.utf8))],
            failure: [])
        let writer = SnapshotWriter(
            configuration: configuration, identity: identity,
            health: ClusterHealth(quorumTimeout: .seconds(5)), logger: Logger(level: .error) { _ in },
            spacing: spacing)
        defer { writer.stop() }
        let rows = CountriesState(countries: SeedList.standard).rows
        let started = ContinuousClock.now
        writer.submit(CountriesState(rows: rows, seq: 100))
        #expect(eventually(every: .milliseconds(5)) { writer.knownSeq == 100 })
        writer.submit(CountriesState(rows: rows, seq: 200))
        writer.submit(CountriesState(rows: rows, seq: 300))
        #expect(writer.waitUntilIdle(within: .seconds(30) * testSlowdown))
        #expect(writer.knownSeq == 300)
        #expect(ContinuousClock.now - started >= spacing, "the second write did not wait its spacing")
        // Two writes: the state at 200 was replaced while it waited.
        let pointer = try EtcdClient(endpoints: cluster.clientURLs).range(
            EtcdRangeRequest(key: EtcdLayout(prefix: "/spaced/").snapshot))
        #expect(pointer.kvs.first?.version == 2, "\(pointer.kvs)")
    }

    /// A snapshot goes only into the store it is of. Across a restore of etcd, which keeps
    /// revisions, the pointer's could still compare equal, and a replica of the store before
    /// wrote its snapshot, at a seq of a history the new store never had, into the new one.
    @Test func aSnapshotIsNotWrittenIntoAnotherStore() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let layout = EtcdLayout(prefix: "/other/")
        let client = EtcdClient(endpoints: cluster.clientURLs)
        _ = try client.txn(
            compare: [], success: [.put(layout.store, Data(StoreIdentity.make().utf8))], failure: [])
        let writer = SnapshotWriter(
            configuration: EtcdConfiguration(
                endpoints: cluster.clientURLs, prefix: "/other/", replicaName: "t"),
            identity: StoreIdentity.make(), health: ClusterHealth(quorumTimeout: .seconds(5)),
            logger: Logger(level: .error) { _ in }, spacing: .zero)
        defer { writer.stop() }
        writer.submit(CountriesState(rows: CountriesState(countries: SeedList.standard).rows, seq: 100))
        #expect(writer.waitUntilIdle(within: .seconds(30) * testSlowdown))
        #expect(writer.knownSeq == 0)
        #expect(try client.range(EtcdRangeRequest(key: layout.snapshot)).kvs.isEmpty)
        #expect(
            try client.range(.prefix(layout.snapshotBlob.chunksPrefix)).kvs.isEmpty, "its chunks are deleted")
    }
}
