import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A real etcd cluster for a test: N members (1 or 3) of /usr/bin/etcd on free ports, data in a
/// ``ScratchDirectory``, elections fast (heartbeat 50 ms, election timeout 500 ms). Each member
/// is a ``ChildProcess``, stopped by its pid in ``stop()`` or when the cluster goes, also when a
/// test fails. Members can be killed (SIGKILL) and restarted on their data.
///
/// The members listen on `hosts` (one address per member, 127.0.0.1 by default) and start
/// through `launcher` (a command prefix per member, none by default), so a fault test can put
/// each member in a network namespace of its own; the cluster's own etcdctl checks of a member
/// run through the same prefix, so they reach it there.
public final class EtcdCluster: @unchecked Sendable {
    // @unchecked: the members array is only changed by the test thread that owns the cluster.

    /// The etcd executable: `ETCD_BINARY`, else /usr/bin/etcd.
    public static let etcd = ProcessInfo.processInfo.environment["ETCD_BINARY"] ?? "/usr/bin/etcd"
    /// The etcdctl executable, beside it.
    public static let etcdctl = (etcd as NSString).deletingLastPathComponent + "/etcdctl"
    /// Whether etcd is installed (scripts/bootstrap installs it).
    public static var isAvailable: Bool { access(etcd, X_OK) == 0 && access(etcdctl, X_OK) == 0 }

    /// The client URL of each member, in member order.
    public let clientURLs: [String]
    /// The peer URL of each member.
    public let peerURLs: [String]
    /// The members' names (`m0`, `m1`...).
    public let names: [String]
    /// Where the data directories and logs are.
    public let scratch: ScratchDirectory
    private let launcher: (Int) -> [String]
    private let arguments: [String]
    private var members: [ChildProcess?]
    /// With `secured`: the certificates (scripts/etcd-certs) every member and client uses.
    public let certificates: Certificates?
    /// etcdctl's TLS flags (and, once auth is on, root's user), added to each of its calls.
    private var etcdctlSecurity: [String] = []

    /// The files scripts/etcd-certs makes: a CA, each member's certificate, a client's.
    public struct Certificates: Sendable {
        /// Where they are.
        public let directory: String
        /// The CA (etcd's --trusted-ca-file, countries' --etcd-cacert).
        public var ca: String { directory + "/ca.pem" }
        /// The client certificate (--etcd-cert).
        public var clientCertificate: String { directory + "/client.pem" }
        /// Its key (--etcd-key).
        public var clientKey: String { directory + "/client-key.pem" }
        var memberCertificate: String { directory + "/member.pem" }
        var memberKey: String { directory + "/member-key.pem" }
    }

    /// The etcd root user's password once ``enableAuthentication(user:password:prefix:)`` ran.
    public static let rootPassword = "root-password-for-tests"

    /// Starts `count` members and waits until every one is healthy (has a leader and answers a
    /// linearizable read), at most `timeout`. `arguments` are added to every member's.
    ///
    /// `secured`: TLS on client and peer URLs (https://) with certificates from scripts/etcd-certs,
    /// and client certificates required (`--client-cert-auth`), as docs/SECURITY.md sets etcd up;
    /// ``enableAuthentication(user:password:prefix:)`` then adds users.
    public init(
        members count: Int = 3, hosts: [String]? = nil, launcher: @escaping (Int) -> [String] = { _ in [] },
        arguments: [String] = [], secured: Bool = false, timeout: Duration = .seconds(15)
    ) throws {
        guard Self.isAvailable else { throw HarnessFailure("etcd is not installed at \(Self.etcd)") }
        let hosts = hosts ?? Array(repeating: "127.0.0.1", count: count)
        precondition(hosts.count == count, "one host per member")
        scratch = try ScratchDirectory(prefix: "etcd")
        names = (0..<count).map { "m\($0)" }
        var clients: [String] = []
        var peers: [String] = []
        let scheme = secured ? "https" : "http"
        for host in hosts {
            clients.append("\(scheme)://\(host):\(try freeTCPPort())")
            peers.append("\(scheme)://\(host):\(try freeTCPPort())")
        }
        if secured {
            let directory = scratch.path + "/certificates"
            let made = try ChildProcess.run(
                CountriesBinary.packageRoot + "/scripts/etcd-certs", [directory] + Array(Set(hosts)).sorted(),
                environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
            guard made.exitCode == 0 else { throw HarnessFailure("scripts/etcd-certs failed: \(made)") }
            let certificates = Certificates(directory: directory)
            self.certificates = certificates
            etcdctlSecurity = [
                "--cacert", certificates.ca, "--cert", certificates.clientCertificate, "--key",
                certificates.clientKey,
            ]
        } else {
            certificates = nil
        }
        clientURLs = clients
        peerURLs = peers
        self.launcher = launcher
        self.arguments = arguments
        members = Array(repeating: nil, count: count)
        for index in 0..<count { try start(index) }
        guard waitUntilHealthy(timeout: timeout) else {
            let logs = (0..<count).map { "\(names[$0]): " + scratch.read("\(names[$0]).log").suffix(2000) }
            stop()
            throw HarnessFailure("etcd did not become healthy within \(timeout): \(logs)")
        }
    }

    deinit { stop() }

    private func start(_ index: Int) throws {
        let initialCluster = zip(names, peerURLs).map { "\($0)=\($1)" }.joined(separator: ",")
        let arguments = [
            "--name", names[index], "--data-dir", try scratch.directory(names[index]),
            "--listen-client-urls", clientURLs[index], "--advertise-client-urls", clientURLs[index],
            "--listen-peer-urls", peerURLs[index], "--initial-advertise-peer-urls", peerURLs[index],
            "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
            "--initial-cluster-token", (scratch.path as NSString).lastPathComponent,
            "--heartbeat-interval", "50", "--election-timeout", "500",
            "--logger", "zap", "--log-level", "warn",
        ]
        let tls =
            certificates.map {
                [
                    "--cert-file", $0.memberCertificate, "--key-file", $0.memberKey, "--trusted-ca-file",
                    $0.ca,
                    "--client-cert-auth", "--peer-cert-file", $0.memberCertificate, "--peer-key-file",
                    $0.memberKey, "--peer-trusted-ca-file", $0.ca, "--peer-client-cert-auth",
                ]
            } ?? []
        let command = launcher(index) + [Self.etcd] + arguments + tls + self.arguments
        members[index] = try ChildProcess(
            command[0], Array(command.dropFirst()), environment: ProcessInfo.processInfo.environment,
            stdout: .file(scratch.file("\(names[index]).log")),
            stderr: .file(scratch.file("\(names[index]).log")))
    }

    /// The pid of a member, nil when it is not running.
    public func pid(of member: Int) -> pid_t? {
        guard let process = members[member], process.isRunning else { return nil }
        return process.pid
    }

    /// Kills a member with SIGKILL and reaps it.
    public func kill(member: Int) {
        members[member]?.crash()
    }

    /// Starts a killed member again on its data; waits until it answers (at most `timeout`).
    public func restart(member: Int, timeout: Duration = .seconds(10)) throws {
        members[member]?.crash()
        try start(member)
        guard eventually(within: timeout, every: .milliseconds(50), { isHealthy(clientURLs[member]) }) else {
            throw HarnessFailure("\(names[member]) did not become healthy again within \(timeout)")
        }
    }

    /// Stops every member (SIGTERM, then SIGKILL after a second). Safe to call twice.
    public func stop() {
        for member in members { member?.signal(SIGTERM) }
        for member in members { member?.stop(grace: .seconds(1), reportingHang: false) }
    }

    /// Waits until every running member is healthy.
    @discardableResult
    public func waitUntilHealthy(timeout: Duration = .seconds(10)) -> Bool {
        eventually(within: timeout, every: .milliseconds(50)) {
            members.indices.allSatisfy { pid(of: $0) == nil || isHealthy(clientURLs[$0]) }
        }
    }

    /// Whether the member at `url` has a leader and answers a linearizable read.
    public func isHealthy(_ url: String) -> Bool {
        let run = try? etcdctl(
            ["--endpoints", url, "--command-timeout", "1s", "endpoint", "health"], near: url)
        return run?.exitCode == 0
    }

    /// How many requests of `method` (`Range`, `Txn`) member `member` has answered, from its
    /// `/metrics` (`grpc_server_handled_total`; the JSON gateway's requests are counted there
    /// too): what a piece of code costs etcd, counted on a cluster nothing else uses. Plaintext
    /// clusters only.
    public func handledRequests(_ method: String, member: Int = 0) throws -> Int {
        let run = try ChildProcess.run(
            "/usr/bin/curl", ["-s", "--max-time", "5", clientURLs[member] + "/metrics"], timeout: .seconds(10)
        )
        var total = 0
        for line in run.stdout.split(separator: "\n")
        where line.hasPrefix("grpc_server_handled_total{") && line.contains("grpc_method=\"\(method)\"") {
            total += Int(Double(line.split(separator: " ").last ?? "") ?? 0)
        }
        return total
    }

    /// `etcdctl arguments...` (API 3) to its end, run through the launcher of the member at
    /// `url` (so from its network namespace, if it has one).
    private func etcdctl(_ arguments: [String], near url: String) throws -> Execution {
        let command =
            (clientURLs.firstIndex(of: url).map(launcher) ?? []) + [Self.etcdctl] + etcdctlSecurity
            + arguments
        return try ChildProcess.run(
            command[0], Array(command.dropFirst()), environment: ["ETCDCTL_API": "3"], timeout: .seconds(5))
    }

    /// The index of the member the running members take for the leader, if one is.
    public func leaderIndex() -> Int? {
        var ids: [Int: String] = [:]
        var leader: String?
        for index in members.indices where pid(of: index) != nil {
            guard
                let run = try? etcdctl(
                    [
                        "--endpoints", clientURLs[index], "--command-timeout", "1s", "endpoint", "status",
                        "-w", "json",
                    ], near: clientURLs[index]),
                run.exitCode == 0,
                let statuses = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))
                    as? [[String: Any]],
                let status = statuses.first?["Status"] as? [String: Any],
                let header = status["header"] as? [String: Any]
            else { continue }
            ids[index] = "\(header["member_id"] ?? "")"
            if let known = status["leader"], "\(known)" != "0" { leader = "\(known)" }
        }
        return ids.first { $0.value == leader }?.key
    }
}

extension EtcdCluster {
    /// Compacts the store's history up to `revision` (etcdctl compaction, physical).
    public func compact(to revision: Int64) throws {
        let endpoints = clientURLs.indices.filter { pid(of: $0) != nil }.map { clientURLs[$0] }
        let run = try etcdctl(
            ["--endpoints", endpoints.joined(separator: ","), "compaction", "--physical", String(revision)])
        guard run.exitCode == 0 else { throw HarnessFailure("etcdctl compaction failed: \(run)") }
    }
}

extension EtcdCluster {
    /// Writes `value` at `key` as anyone who reaches etcd's port can (etcdctl put): what a forged
    /// or damaged value in a service's keys looks like.
    public func put(_ key: String, _ value: String) throws {
        let endpoints = clientURLs.indices.filter { pid(of: $0) != nil }.map { clientURLs[$0] }
        let run = try etcdctl(["--endpoints", endpoints.joined(separator: ","), "put", key, value])
        guard run.exitCode == 0 else { throw HarnessFailure("etcdctl put failed: \(run)") }
    }
}

extension EtcdCluster {
    /// `etcdctl arguments...` (API 3) with the cluster's TLS flags and root user, to its end.
    public func etcdctl(_ arguments: [String]) throws -> Execution {
        try ChildProcess.run(
            Self.etcdctl, etcdctlSecurity + arguments, environment: ["ETCDCTL_API": "3"],
            timeout: .seconds(10))
    }

    /// Turns etcd's authentication on with a `root` user (``rootPassword``) and `user`, whose
    /// role grants read and write on exactly the keys under `prefix`: the setup of
    /// docs/SECURITY.md. From then on the harness's own etcdctl calls sign in as root.
    public func enableAuthentication(user: String, password: String, prefix: String) throws {
        let endpoints = ["--endpoints", clientURLs.joined(separator: ",")]
        let steps: [[String]] = [
            ["user", "add", "root:\(Self.rootPassword)"], ["user", "grant-role", "root", "root"],
            ["role", "add", "countries"],
            ["role", "grant-permission", "countries", "--prefix=true", "readwrite", prefix],
            ["user", "add", "\(user):\(password)"], ["user", "grant-role", user, "countries"],
            ["auth", "enable"],
        ]
        for step in steps {
            let run = try etcdctl(endpoints + step)
            guard run.exitCode == 0 else {
                throw HarnessFailure("etcdctl \(step.joined(separator: " ")) failed: \(run)")
            }
        }
        etcdctlSecurity += ["--user", "root:\(Self.rootPassword)"]
    }
}

extension EtcdCluster {
    /// Saves a snapshot of the store to `path` (etcdctl snapshot save, from the first member).
    public func saveSnapshot(to path: String) throws {
        let run = try etcdctl(["--endpoints", clientURLs[0], "snapshot", "save", path])
        guard run.exitCode == 0 else { throw HarnessFailure("etcdctl snapshot save failed: \(run)") }
    }

    /// Puts a one-member cluster back to `snapshot` as an operator would: the member stopped,
    /// its data replaced by `etcdctl snapshot restore` with the same name, URLs and cluster token
    /// (so the cluster and member ids stay the same), and started again.
    public func restore(from snapshot: String, timeout: Duration = .seconds(10)) throws {
        precondition(names.count == 1, "restore is for one-member clusters")
        members[0]?.crash()
        let dataDirectory = scratch.file(names[0])
        try? FileManager.default.removeItem(atPath: dataDirectory)
        let run = try ChildProcess.run(
            Self.etcdctl,
            [
                "snapshot", "restore", snapshot, "--name", names[0], "--data-dir", dataDirectory,
                "--initial-cluster", "\(names[0])=\(peerURLs[0])", "--initial-advertise-peer-urls",
                peerURLs[0],
                "--initial-cluster-token", (scratch.path as NSString).lastPathComponent,
            ], environment: ["ETCDCTL_API": "3"], timeout: .seconds(20))
        guard run.exitCode == 0 else { throw HarnessFailure("etcdctl snapshot restore failed: \(run)") }
        try start(0)
        guard waitUntilHealthy(timeout: timeout) else {
            throw HarnessFailure(
                "etcd did not become healthy after the restore: \(scratch.read("\(names[0]).log").suffix(2000))"
            )
        }
    }
}
