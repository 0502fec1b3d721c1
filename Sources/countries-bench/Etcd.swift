import Foundation
@preconcurrency import Glibc
import LoadGeneration
import SystemSupport

/// A private 3-member etcd cluster on loopback for the replicated rows: free ports, data in a
/// temp dir, the same election and compaction settings as scripts/cluster (docs/HA.md).
final class EtcdUnderTest {
    let clientURLs: [String]
    let children: [Child]

    /// Starts the members and waits until a replica could use them (every member healthy).
    ///
    /// The ports are found free and bound by etcd a moment later, so another process can take
    /// one in between (an outgoing connection's ephemeral port) and a member exits at start: a
    /// fresh directory and fresh ports then, up to three times in all.
    init(executable: String, members: Int = 3) throws {
        var attempt = 1
        while true {
            do {
                let launched = try Self.launch(executable: executable, members: members)
                clientURLs = launched.clients
                children = launched.children
                return
            } catch let exited as MemberExitedAtStart where attempt < 3 {
                attempt += 1
                progress("\(exited); starting etcd again on other ports")
            } catch let exited as MemberExitedAtStart {
                throw BenchError("\(exited) (three tries)")
            }
        }
    }

    /// A member that exited before the cluster was healthy, with the end of its log.
    private struct MemberExitedAtStart: Error, CustomStringConvertible {
        let description: String
    }

    /// One try: the members started on fresh ports, healthy; or all of them stopped and why.
    private static func launch(executable: String, members: Int) throws -> (
        clients: [String], children: [Child]
    ) {
        let directory = try makeTemporaryDirectory("etcd")
        let names = (1...members).map { "m\($0)" }
        let clients = try names.map { _ in "http://127.0.0.1:\(try LoopbackPort.free())" }
        let peers = try names.map { _ in "http://127.0.0.1:\(try LoopbackPort.free())" }
        let initial = zip(names, peers).map { "\($0)=\($1)" }.joined(separator: ",")
        var started: [Child] = []
        // Whatever happens before the cluster is handed over, no member is left running.
        var handedOver = false
        defer { if !handedOver { for child in started { child.stop() } } }
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
        let etcdctl = (executable as NSString).deletingLastPathComponent + "/etcdctl"
        let deadline = nowNanos() + 20_000_000_000
        while nowNanos() < deadline {
            if let index = started.firstIndex(where: \.hasExited) {
                // The directory goes when the bench ends: the reason travels in the error.
                let log =
                    (try? String(contentsOfFile: "\(directory)/\(names[index]).log", encoding: .utf8)) ?? ""
                throw MemberExitedAtStart(
                    description:
                        "\(started[index].name) exited at start (\(clients[index]), peer \(peers[index])); its log ends: \(log.suffix(600).trimmingCharacters(in: .whitespacesAndNewlines))"
                )
            }
            let health = try runToEnd(
                etcdctl,
                [
                    "--endpoints", clients.joined(separator: ","), "--command-timeout", "1s", "endpoint",
                    "health",
                ])
            if health.status == 0 {
                handedOver = true
                return (clients, started)
            }
            usleep(100_000)
        }
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
