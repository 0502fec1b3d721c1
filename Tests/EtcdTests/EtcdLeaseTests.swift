import Etcd
import Foundation
import TestSupport
import Testing

/// Leases through the JSON gateway, as the writer election uses them: granted, renewed, a key
/// put with one, and the key gone when the lease is revoked or expires.
@Suite(.enabled(if: EtcdCluster.isAvailable, "etcd is not installed (scripts/bootstrap)"))
struct EtcdLeaseTests {
    @Test func aLeasedKeyLivesWhileItsLeaseIsRenewedAndGoesWithIt() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let lease = try client.grantLease(ttlSeconds: 2)
        #expect(lease.id != 0 && lease.ttlSeconds == 2)
        let put = try client.txn(
            compare: [.createRevision("writer/a", equals: 0)],
            success: [.putLeased("writer/a", Data("tcp://a:5555".utf8), lease: lease.id)], failure: [])
        #expect(put.succeeded)
        #expect(try client.keepAlive(lease.id) == 2)
        #expect(
            try client.range(EtcdRangeRequest(key: "writer/a")).kvs.first?.value == Data("tcp://a:5555".utf8))
        try client.revokeLease(lease.id)
        #expect(try client.range(EtcdRangeRequest(key: "writer/a")).kvs.isEmpty, "revoked: its key is gone")
        #expect(try client.keepAlive(lease.id) == 0, "etcd no longer has it")
        try client.revokeLease(lease.id)  // not an error
    }

    @Test func aLeaseNotRenewedExpiresWithItsKey() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let lease = try client.grantLease(ttlSeconds: 1)
        _ = try client.txn(
            compare: [], success: [.putLeased("writer/b", Data("b".utf8), lease: lease.id)], failure: [])
        #expect(
            eventually(within: .seconds(10)) {
                (try? client.range(EtcdRangeRequest(key: "writer/b")).kvs.isEmpty) == true
            })
        #expect(try client.keepAlive(lease.id) == 0)
    }
}
