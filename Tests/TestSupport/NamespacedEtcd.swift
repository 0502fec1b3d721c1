import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// An etcd v3 cluster (Debian's /usr/bin/etcd) with one member on each of some hosts of a
/// ``BridgedNetwork``: member `HOST` listens on its address on one LAN (clients on 2379, peers
/// on 2380), keeps its data in a directory of the test's own, and logs to a file there. Fast
/// elections (heartbeat 50 ms, election timeout 500 ms), so a lost leader is replaced within
/// about a second. Members are started, SIGKILLed and started again by pid
/// (``start(_:)``, ``kill(_:)``); ``stop()`` stops them all.
public final class NamespacedEtcd: @unchecked Sendable {
    // @unchecked: `members` is only touched under `lock`; the rest is set in `init`.

    public let network: BridgedNetwork
    /// The hosts with a member, in order; each member is named after its host.
    public let hosts: [String]
    /// The LAN the members listen on.
    public let lan: String
    /// Where the data directories and logs are.
    public let directory: ScratchDirectory
    private let token: String
    private let lock = NSLock()
    private var members: [String: ChildProcess] = [:]

    /// Starts a member on each of `hosts` (on `lan`) and waits until the cluster is healthy.
    public init(
        network: BridgedNetwork, hosts: [String], lan: String, directory: ScratchDirectory,
        healthyWithin limit: Duration = .seconds(20)
    ) throws {
        guard access(Self.etcd, X_OK) == 0, access(Self.etcdctl, X_OK) == 0 else {
            throw HarnessFailure(
                "no \(Self.etcd) or \(Self.etcdctl) here (Debian's package etcd-server, etcd-client)")
        }
        self.network = network
        self.hosts = hosts
        self.lan = lan
        self.directory = directory
        token = "countries-\(UInt32.random(in: 0...UInt32.max))"
        do {
            for host in hosts { try start(host) }
            guard eventually(within: limit, every: .milliseconds(200), { isHealthy(from: hosts[0]) }) else {
                throw HarnessFailure("the etcd cluster did not become healthy: \(logTails())")
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    public static let etcd = "/usr/bin/etcd"
    public static let etcdctl = "/usr/bin/etcdctl"

    /// `http://ADDRESS:2379` of `host`'s member.
    public func clientURL(_ host: String) -> String { "http://\(network.address(of: host, on: lan)):2379" }

    /// Every member's client URL, comma-separated (for `--etcd` and `--endpoints`).
    public var clientURLs: String { hosts.map(clientURL).joined(separator: ",") }

    /// The file `host`'s member logs to.
    public func logFile(_ host: String) -> String { directory.file("\(host).log") }

    /// Starts `host`'s member, on its data directory (a member that ran before rejoins with its
    /// data). Does nothing while it runs.
    public func start(_ host: String) throws {
        if lock.withLock({ members[host]?.isRunning }) == true { return }
        let peers = hosts.map { "\($0)=http://\(network.address(of: $0, on: lan)):2380" }
        let address = network.address(of: host, on: lan)
        let process = try network.start(
            on: host, Self.etcd,
            [
                "--name", host, "--data-dir", directory.file("\(host).etcd"),
                "--listen-client-urls", "http://\(address):2379",
                "--advertise-client-urls", "http://\(address):2379",
                "--listen-peer-urls", "http://\(address):2380",
                "--initial-advertise-peer-urls", "http://\(address):2380",
                "--initial-cluster", peers.joined(separator: ","), "--initial-cluster-state", "new",
                "--initial-cluster-token", token,
                "--heartbeat-interval", "50", "--election-timeout", "500",
                "--auto-compaction-mode", "revision", "--auto-compaction-retention", "1000",
            ],
            environment: ProcessInfo.processInfo.environment, stdout: .file(logFile(host)),
            stderr: .file(logFile(host)))
        lock.withLock { members[host] = process }
    }

    /// SIGKILLs `host`'s member and reaps it.
    public func kill(_ host: String) {
        lock.withLock { members[host] }?.crash()
    }

    /// Whether `host`'s member runs.
    public func isRunning(_ host: String) -> Bool { lock.withLock { members[host]?.isRunning } ?? false }

    /// Stops every member (SIGTERM, then SIGKILL). Safe to call twice.
    public func stop() {
        for process in lock.withLock({ Array(members.values) }) { process.stop() }
    }

    /// `etcdctl arguments...` on `host` against `endpoints` (default: every member), with a
    /// command timeout of `timeout`.
    public func etcdctl(
        from host: String, _ arguments: [String], endpoints: String? = nil, timeout: Duration = .seconds(2)
    ) throws -> Execution {
        var environment = ProcessInfo.processInfo.environment
        environment["ETCDCTL_API"] = "3"
        return try network.run(
            on: host, Self.etcdctl,
            [
                "--endpoints", endpoints ?? clientURLs, "--command-timeout", "\(timeout.milliseconds)ms",
                "--dial-timeout", "\(timeout.milliseconds)ms",
            ] + arguments,
            environment: environment, timeout: timeout * 3 + .seconds(5))
    }

    /// Whether `endpoint health` from `host` finds every member healthy (a member is healthy
    /// when it can read through a quorum).
    public func isHealthy(from host: String) -> Bool {
        (try? etcdctl(from: host, ["endpoint", "health"]))?.exitCode == 0
    }

    /// The host whose member is the leader, as the members reachable from `host` say; nil when
    /// none names one (no quorum, or none reachable).
    public func leader(from host: String) -> String? {
        // `-w simple`: "URL, ID, VERSION, DB SIZE, IS LEADER, ..." per reachable member (JSON
        // would carry the 64-bit member ids as numbers a Double cannot hold).
        guard let result = try? etcdctl(from: host, ["endpoint", "status", "-w", "simple"]) else {
            return nil
        }
        for line in result.stdout.split(separator: "\n") {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count > 4, fields[4] == "true" else { continue }
            return hosts.first { clientURL($0) == fields[0] }
        }
        return nil
    }

    /// The last lines of every member's log, for failure messages.
    public func logTails(lines: Int = 15) -> String {
        hosts.map { host in
            let tail = directory.read("\(host).log").split(separator: "\n").suffix(lines).joined(
                separator: "\n")
            return "--- etcd \(host)\n\(tail)"
        }.joined(separator: "\n")
    }
}
