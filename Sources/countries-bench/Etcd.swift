import Foundation
@preconcurrency import Glibc
import LoadGeneration

/// A private 3-member etcd cluster on loopback for the replicated rows: free ports, data in a
/// temp dir, the same election and compaction settings as scripts/cluster (docs/HA.md).
final class EtcdUnderTest {
    let clientURLs: [String]
    let children: [Child]

    /// Starts the members and waits until a replica could use them (every member healthy).
    init(executable: String, members: Int = 3) throws {
        let directory = try makeTemporaryDirectory("etcd")
        let names = (1...members).map { "m\($0)" }
        let clients = try names.map { _ in "http://127.0.0.1:\(try freePort())" }
        let peers = try names.map { _ in "http://127.0.0.1:\(try freePort())" }
        let initial = zip(names, peers).map { "\($0)=\($1)" }.joined(separator: ",")
        var started: [Child] = []
        for (index, name) in names.enumerated() {
            started.append(
                try Child(
                    name: "etcd \(name)", executable: executable,
                    arguments: [
                        "--name", name, "--data-dir", "\(directory)/\(name)",
                        "--listen-client-urls", clients[index], "--advertise-client-urls", clients[index],
                        "--listen-peer-urls", peers[index], "--initial-advertise-peer-urls", peers[index],
                        "--initial-cluster", initial, "--initial-cluster-state", "new",
                        "--initial-cluster-token", (directory as NSString).lastPathComponent,
                        "--heartbeat-interval", "50", "--election-timeout", "500",
                        "--auto-compaction-mode", "revision", "--auto-compaction-retention", "10000",
                        "--logger", "zap", "--log-level", "warn",
                    ], logPath: "\(directory)/\(name).log"))
        }
        clientURLs = clients
        children = started
        let etcdctl = (executable as NSString).deletingLastPathComponent + "/etcdctl"
        let deadline = nowNanos() + 20_000_000_000
        while nowNanos() < deadline {
            if let exited = children.first(where: \.hasExited) {
                throw BenchError("\(exited.name) exited at start; see its log in \(directory)")
            }
            let health = try runToEnd(
                etcdctl,
                [
                    "--endpoints", clients.joined(separator: ","), "--command-timeout", "1s", "endpoint",
                    "health",
                ])
            if health.status == 0 { return }
            usleep(100_000)
        }
        stop()
        throw BenchError("etcd did not become healthy within 20 s (logs in \(directory))")
    }

    func stop() {
        for child in children { child.stop() }
    }

    /// /usr/bin/etcd (or ETCD_BINARY), if installed with etcdctl beside it.
    static func find() -> String? {
        let etcd = ProcessInfo.processInfo.environment["ETCD_BINARY"] ?? "/usr/bin/etcd"
        let etcdctl = (etcd as NSString).deletingLastPathComponent + "/etcdctl"
        let manager = FileManager.default
        return manager.isExecutableFile(atPath: etcd) && manager.isExecutableFile(atPath: etcdctl)
            ? etcd : nil
    }
}
