import Foundation
@preconcurrency import Glibc
import SystemSupport
import TestSupport
import Testing

/// scripts/cluster as a person runs it (docs/HA.md): `up` starts 3 etcd members and 2 replicas
/// and prints the lists to copy, the replicas are one service, `status` says what runs, `kill`
/// and `start` take one process down and back, `down` stops everything by pid and removes the
/// state; `up` refuses a second time and when a port is taken. On the built binary
/// (COUNTRIES_CLUSTER_BINARY), on loopback addresses of the test's own (COUNTRIES_CLUSTER_NET),
/// state in a scratch directory; every process the script started is SIGKILLed by the pid it
/// recorded when the test ends, also when it fails.
@Suite(
    .serialized, .hangGuard(),
    .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct ClusterScriptTests {
    /// One cluster's state directory and addresses.
    final class ClusterRun {
        let scratch: ScratchDirectory
        let net: String
        let environment: [String: String]
        var directory: String { scratch.file("cluster") }

        init() throws {
            scratch = try ScratchDirectory(prefix: "cluster")
            // 127.X.Y.0/24 of this test run: distinct from the default 127.0.0 and from other runs.
            net = "127.\(100 + Int(getpid()) % 100).\(Int.random(in: 1...250))"
            environment = CountriesBinary.environment(adding: [
                "COUNTRIES_CLUSTER_DIR": scratch.file("cluster"), "COUNTRIES_CLUSTER_NET": net,
                "COUNTRIES_CLUSTER_BINARY": CountriesBinary.path,
            ])
        }

        /// Runs the change `countries arguments...`, again while it is refused with "nothing
        /// changed" (a replica without quorum yet: on a loaded machine its 500 ms reads of a
        /// fresh cluster can time out for a moment). Such a refusal changed nothing, so another
        /// try is safe; any other outcome is returned as it came.
        func change(_ arguments: [String]) throws -> Execution {
            var result = try Countries.run(arguments)
            try eventually(within: .seconds(10), every: .milliseconds(200)) {
                guard result.exitCode != 0, result.stderr.contains("nothing changed") else { return true }
                result = try Countries.run(arguments)
                return false
            }
            return result
        }

        /// Runs `scripts/cluster arguments...` to its end (bounded).
        func script(
            _ arguments: [String], timeout: Duration = .seconds(60), adding extra: [String: String] = [:]
        ) throws -> Execution {
            try ChildProcess.run(
                CountriesBinary.packageRoot + "/scripts/cluster", arguments,
                environment: environment.merging(extra) { $1 }, timeout: timeout)
        }

        /// The pid the script recorded for `name`, if it did.
        func pid(_ name: String) -> pid_t? {
            (try? String(contentsOfFile: "\(directory)/\(name).pid", encoding: .utf8))
                .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }

        /// Every process the script recorded, whether it still runs.
        var recorded: [pid_t] { ["m1", "m2", "m3", "r1", "r2"].compactMap(pid) }

        /// SIGKILLs whatever the script started and still runs, by its recorded pid (only if
        /// that pid still runs the command line the script saved for it).
        func cleanUp() {
            for name in ["m1", "m2", "m3", "r1", "r2"] {
                guard let pid = pid(name),
                    ProcessMemory.runs(pid, commandLineIn: "\(directory)/\(name).args")
                else { continue }
                kill(pid, SIGKILL)
            }
            scratch.remove()
        }
    }

    static func isAlive(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 && !ProcessMemory.isGone(pid) }

    @Test func upStatusKillStartDownAndRefusals() throws {
        let run = try ClusterRun()
        defer { run.cleanUp() }

        let usage = try run.script(["sideways"])
        #expect(usage.exitCode == 64 && usage.stderr.contains("usage: scripts/cluster up"), "\(usage)")

        // A port of the cluster taken: refused before anything starts.
        let taken = try TCPListener(host: "\(run.net).12", port: 2380)
        let refused = try run.script(["up"])
        taken.close()
        #expect(refused.exitCode == 69, "\(refused)")
        #expect(
            refused.stderr
                == "cluster: \(run.net).12:2380 is taken (another etcd?); stop it or set COUNTRIES_CLUSTER_NET=127.0.1\n",
            "\(refused)")
        #expect(run.recorded.isEmpty)

        let up = try run.script(["up"])
        try #require(up.exitCode == 0, "\(up)")
        let n = run.net
        #expect(
            up.lines.contains("--etcd http://\(n).11:2379,http://\(n).12:2379,http://\(n).13:2379"), "\(up)")
        #expect(up.lines.contains("--command tcp://\(n).21:5555,tcp://\(n).22:5555"), "\(up)")
        #expect(up.lines.contains("--events tcp://\(n).21:5556,tcp://\(n).22:5556"), "\(up)")
        let started = run.recorded
        #expect(started.count == 5 && started.allSatisfy(Self.isAlive))

        // The two replicas are one service: one seq across both.
        let first = try run.change(["toggle", "France", "--command", "tcp://\(n).21:5555"])
        let second = try run.change(["toggle", "France", "--command", "tcp://\(n).22:5555"])
        #expect(first.stdout == "France: visited (seq 1)\n", "\(first)")
        #expect(second.stdout == "France: not visited (seq 2)\n", "\(second)")

        let again = try run.script(["up"])
        #expect(again.exitCode == 69 && again.stderr.contains("already up"), "\(again)")
        let status = try run.script(["status"])
        #expect(status.exitCode == 0 && status.stdout.contains("5 of 5 running"), "\(status)")
        #expect(status.stdout.contains("etcd leader: http://\(n).1"), "\(status)")

        // One replica down and back; the other answers meanwhile.
        let r1 = try #require(run.pid("r1"))
        let killed = try run.script(["kill", "r1"])
        #expect(killed.exitCode == 0, "\(killed)")
        #expect(eventually(within: .seconds(5)) { !Self.isAlive(r1) })
        let partial = try run.script(["status"])
        #expect(partial.stdout.contains("r1             not running") && partial.stdout.contains("4 of 5"))
        let meanwhile = try Countries.run(["count", "--command", "tcp://\(n).22:5555", "--timeout", "3000"])
        #expect(meanwhile.exitCode == 0, "\(meanwhile)")
        // Started again on another binary (two builds measured in turn): it runs that one, and
        // status and kill still know it.
        let other = run.scratch.file("countries-other")
        try FileManager.default.createSymbolicLink(atPath: other, withDestinationPath: CountriesBinary.path)
        let restarted = try run.script(["start", "r1"], adding: ["COUNTRIES_CLUSTER_BINARY": other])
        #expect(restarted.exitCode == 0 && run.pid("r1") != r1, "\(restarted)")
        let commandLine = try run.pid("r1").map {
            try String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8)
        }
        #expect(commandLine?.hasPrefix(other + "\u{0}serve\u{0}") == true, "\(commandLine ?? "gone")")
        #expect(try run.script(["status"]).stdout.contains("5 of 5"))
        let back = try Countries.run([
            "get", "France", "--command", "tcp://\(n).21:5555", "--timeout", "5000",
        ])
        #expect(back.exitCode == 0 && back.stdout.contains("France"), "\(back)")

        // r1.args changed while r1 runs (an operator adding --metrics): kill says so rather than
        // "not running", and start refuses the taken port rather than taking the running
        // replica's answer for the one it launched (which exited at once).
        let arguments = "\(run.directory)/r1.args"
        let saved = try String(contentsOfFile: arguments, encoding: .utf8)
        try (saved + "--metrics\n\(n).21:9101\n").write(toFile: arguments, atomically: true, encoding: .utf8)
        let mismatch = try run.script(["kill", "r1"])
        #expect(mismatch.exitCode == 69 && mismatch.stderr.contains("another command line"), "\(mismatch)")
        let occupied = try run.script(["start", "r1"])
        #expect(occupied.exitCode == 69, "\(occupied)")
        #expect(
            occupied.stderr
                == "cluster: \(n).21:5555 is taken (by a process not started as r1, or one whose r1.args changed since); stop it first\n",
            "\(occupied)")
        try saved.write(toFile: arguments, atomically: true, encoding: .utf8)
        #expect(run.pid("r1").map(Self.isAlive) == true)

        let everyone = run.recorded
        let down = try run.script(["down"])
        #expect(down.exitCode == 0 && down.stdout.contains("cluster: down"), "\(down)")
        #expect(everyone.allSatisfy { !Self.isAlive($0) }, "left running: \(everyone.filter(Self.isAlive))")
        #expect(!FileManager.default.fileExists(atPath: run.directory))
        let after = try run.script(["status"])
        #expect(after.exitCode == 3 && after.stdout.contains("0 of 5 running"), "\(after)")
    }

    /// `up --secure`: etcd over TLS with client certificates and users (docs/SECURITY.md); the
    /// replicas serve as their user, and etcd refuses whoever comes without one.
    @Test func upSecureServesOverTLSAsAUserOnly() throws {
        let run = try ClusterRun()
        defer { run.cleanUp() }
        let up = try run.script(["up", "--secure"])
        try #require(up.exitCode == 0, "\(up)")
        let n = run.net
        #expect(
            up.lines.contains("--etcd https://\(n).11:2379,https://\(n).12:2379,https://\(n).13:2379"),
            "\(up)")
        #expect(
            up.stdout.contains("--etcd-user countries --etcd-password-file \(run.directory)/etcd-password"))
        let mode = try FileManager.default.attributesOfItem(atPath: "\(run.directory)/etcd-password")[
            .posixPermissions]
        #expect(mode as? Int == 0o600)
        let toggled = try run.change([
            "toggle", "France", "--command", "tcp://\(n).21:5555,tcp://\(n).22:5555",
        ])
        #expect(toggled.stdout == "France: visited (seq 1)\n", "\(toggled)")
        let status = try run.script(["status"])
        #expect(status.stdout.contains("etcd leader: https://\(n).1"), "\(status)")

        // The certificates without the user: refused.
        let certificates = run.directory + "/certs"
        let forged = try ChildProcess.run(
            EtcdCluster.etcdctl,
            [
                "--endpoints", "https://\(n).11:2379", "--cacert", certificates + "/ca.pem", "--cert",
                certificates + "/client.pem", "--key", certificates + "/client-key.pem", "--command-timeout",
                "2s",
                "put", "/countries/seq", "99",
            ], environment: ["ETCDCTL_API": "3"], timeout: .seconds(10))
        #expect(forged.exitCode != 0 && forged.stderr.contains("permission denied"), "\(forged)")
        let down = try run.script(["down"])
        #expect(down.exitCode == 0, "\(down)")
    }
}

/// A listening TCP socket on `host:port`, to take a port the way another program would.
private final class TCPListener {
    private var fd: Int32

    init(host: String, port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessFailure("socket(2) failed") }
        guard IPv4SocketAddress(host: host, port: port).bind(fd), listen(fd, 4) == 0 else {
            Glibc.close(fd)
            throw HarnessFailure("cannot listen on \(host):\(port): \(String(cString: strerror(errno)))")
        }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
