import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// The replicated mode's hosts (``ReplicaTopology``) with etcd alone: the LANs carry what they
/// should and no more, and cutting two of three members' links takes the quorum away from
/// the third until they come back.
@Suite(
    .serialized,
    .enabled(
        if: FaultEnvironment.canCreateNamespaces,
        "skipped: network namespaces cannot be created here (needs root or CAP_NET_ADMIN and ip(8))"),
    .enabled(
        if: access(NamespacedEtcd.etcd, X_OK) == 0,
        "skipped: no \(NamespacedEtcd.etcd) here (Debian's etcd-server)")
)
struct ReplicaTopologyTests {
    @Test(.timeLimit(.minutes(2)))
    func aWriteThroughTheLastMemberFailsWhileTheMajorityIsCutAndSucceedsOnceItIsBack() throws {
        let topology = try ReplicaTopology()
        defer { topology.remove() }
        let directory = try ScratchDirectory(prefix: "cetcd")
        defer { directory.remove() }
        let etcd = try NamespacedEtcd(
            network: topology.network, hosts: ReplicaTopology.members, lan: ReplicaTopology.etcdLAN,
            directory: directory)
        defer { etcd.stop() }

        // r1 reaches every member; c reaches none (it is on client-lan only).
        #expect(etcd.isHealthy(from: "r1"), "\(etcd.logTails())")
        let put = try etcd.etcdctl(from: "r1", ["put", "k", "before"])
        #expect(put.exitCode == 0, "\(put)")
        #expect(try etcd.etcdctl(from: "c", ["get", "k"], timeout: .milliseconds(500)).exitCode != 0)
        #expect(etcd.leader(from: "r2") != nil, "no member names a leader")

        // The majority's cables pulled: e1 alone cannot commit.
        try topology.cut("e2", from: ReplicaTopology.etcdLAN)
        try topology.cut("e3", from: ReplicaTopology.etcdLAN)
        let lonely = try etcd.etcdctl(
            from: "r1", ["put", "k", "during"], endpoints: etcd.clientURL("e1"), timeout: .seconds(2))
        #expect(lonely.exitCode != 0, "a write through e1 succeeded without a quorum: \(lonely)")

        // Back: the same write through e1 succeeds again, and everyone reads it.
        try topology.restore("e2", to: ReplicaTopology.etcdLAN)
        try topology.restore("e3", to: ReplicaTopology.etcdLAN)
        let restored = ContinuousClock.now
        var recovered: Duration?
        eventually(within: .seconds(15), every: .milliseconds(100)) {
            let again = try? etcd.etcdctl(
                from: "r1", ["put", "k", "after"], endpoints: etcd.clientURL("e1"), timeout: .seconds(1))
            if again?.exitCode == 0 { recovered = ContinuousClock.now - restored }
            return recovered != nil
        }
        #expect(recovered != nil, "e1 took no write within 15 s of the restore: \(etcd.logTails())")
        let read = try etcd.etcdctl(
            from: "r2", ["get", "k", "--print-value-only"], endpoints: etcd.clientURL("e3"))
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "after", "\(read)")
        print(
            "etcd in namespaces: the lonely write failed after \(lonely.duration); writes resumed \(recovered ?? .zero) after the restore"
        )
    }
}
