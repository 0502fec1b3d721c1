import Foundation
import TestSupport

// The hosts of the replicated mode's tests (docs/PROTOCOL.md, "Replicated mode"): three etcd
// members, two replicas and a client host on two switched LANs.

/// e1, e2, e3 (etcd members) on etcd-lan (10.205.1.0/24); r1, r2 (replicas) on etcd-lan and
/// client-lan (10.205.2.0/24); c (clients and subscribers) on client-lan only, so it reaches the
/// replicas and never etcd. Faults are links: ``cut(_:from:)`` and ``restore(_:to:)``.
final class ReplicaTopology: Sendable {
    static let etcdLAN = "etcd-lan"
    static let clientLAN = "client-lan"
    static let members = ["e1", "e2", "e3"]
    static let replicas = ["r1", "r2"]
    static let client = "c"

    let network: BridgedNetwork

    init() throws {
        network = try BridgedNetwork(
            lans: [.init(Self.etcdLAN, subnet: "10.205.1"), .init(Self.clientLAN, subnet: "10.205.2")],
            hosts: Self.members.map { ($0, [Self.etcdLAN]) }
                + Self.replicas.map {
                    ($0, [Self.etcdLAN, Self.clientLAN])
                } + [(Self.client, [Self.clientLAN])],
            prefix: "crep")
    }

    /// `host`'s cable to `lan` pulled.
    func cut(_ host: String, from lan: String) throws { try network.setLink(host, lan, up: false) }

    /// `host`'s cable to `lan` plugged back.
    func restore(_ host: String, to lan: String) throws { try network.setLink(host, lan, up: true) }

    /// `tcp://ADDRESS:PORT` of `replica` on client-lan.
    func endpoint(of replica: String, port: Int) -> String {
        "tcp://\(network.address(of: replica, on: Self.clientLAN)):\(port)"
    }

    /// An etcd member (the shared ``EtcdCluster``) on each of e1, e2, e3, member i on host
    /// `e(i+1)`, listening on etcd-lan; the cluster's own checks run on the members' hosts.
    /// Compaction keeps the last 1,000 revisions.
    func startEtcd() throws -> EtcdCluster {
        guard let ip = SystemTool.path("ip") else { throw HarnessFailure("no ip(8) here") }
        let network = network
        return try EtcdCluster(
            members: Self.members.count,
            hosts: Self.members.map { network.address(of: $0, on: Self.etcdLAN) },
            launcher: { [ip, "netns", "exec", network.namespace(Self.members[$0])] },
            arguments: ["--auto-compaction-mode", "revision", "--auto-compaction-retention", "1000"])
    }

    /// `etcdctl arguments...` (API 3) on `host` against `endpoints`, each call bounded by
    /// `timeout`.
    func etcdctl(
        from host: String, endpoints: [String], _ arguments: [String], timeout: Duration = .seconds(2)
    )
        throws -> Execution
    {
        let milliseconds = "\(timeout.milliseconds)ms"
        return try network.run(
            on: host, EtcdCluster.etcdctl,
            [
                "--endpoints", endpoints.joined(separator: ","), "--command-timeout", milliseconds,
                "--dial-timeout", milliseconds,
            ] + arguments,
            environment: ["ETCDCTL_API": "3"], timeout: timeout * 3 + .seconds(5))
    }

    /// The last lines of every member's log, for failure messages.
    static func logTails(_ etcd: EtcdCluster, lines: Int = 15) -> String {
        etcd.names.map { name in
            let tail = etcd.scratch.read("\(name).log").split(separator: "\n").suffix(lines).joined(
                separator: "\n")
            return "--- etcd \(name)\n\(tail)"
        }.joined(separator: "\n")
    }

    /// Deletes every namespace. Safe to call twice.
    func remove() { network.remove() }
}

/// `countries serve --etcd ...` on r1 and r2 (commands on 5555, events on 5556, on client-lan),
/// killed and started again by pid. Every process it ever started is kept, with what it wrote,
/// for failure messages.
final class ReplicaServices: @unchecked Sendable {
    // @unchecked: `processes` is only touched under `lock`.
    let topology: ReplicaTopology
    let etcd: String
    private let lock = NSLock()
    private var processes: [(replica: String, process: ChildProcess)] = []

    /// Starts a replica on each of r1 and r2 against the etcd client URLs `etcd`.
    init(_ topology: ReplicaTopology, etcd: String) throws {
        self.topology = topology
        self.etcd = etcd
        do {
            for replica in ReplicaTopology.replicas { try start(replica) }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    var commandEndpoints: [String] { ReplicaTopology.replicas.map { topology.endpoint(of: $0, port: 5555) } }
    var eventEndpoints: [String] { ReplicaTopology.replicas.map { topology.endpoint(of: $0, port: 5556) } }

    /// Starts `replica` and waits until it serves.
    func start(_ replica: String) throws {
        let process = try topology.network.start(
            on: replica, CountriesBinary.path,
            [
                "serve", "--etcd", etcd, "--command", topology.endpoint(of: replica, port: 5555),
                "--events", topology.endpoint(of: replica, port: 5556), "--replica-name", replica,
                "--heartbeat-ms", "200", "--insecure",
            ])
        lock.withLock { processes.append((replica, process)) }
        guard process.stderr.waitFor(timeout: .seconds(20), { $0.contains("serving commands on") }) != nil
        else {
            throw HarnessFailure("replica \(replica) did not start: \(process.stderr.text)")
        }
    }

    /// SIGKILLs `replica`'s running process and reaps it.
    func kill(_ replica: String) {
        for process in lock.withLock({ processes.filter { $0.replica == replica }.map(\.process) }) {
            process.crash()
        }
    }

    /// Stops every replica (SIGTERM, then SIGKILL). Safe to call twice.
    func stop() {
        for (_, process) in lock.withLock({ processes }) { process.stop() }
    }

    /// What every replica process wrote to stderr, for failure messages.
    var logs: String {
        lock.withLock { processes }.map {
            "--- replica \($0.replica) (pid \($0.process.pid))\n\($0.process.stderr.text)"
        }
        .joined(separator: "\n")
    }
}

/// `countries events --since 0 --json` on c, following `events` and asking `command` for
/// history (comma-separated lists, where the binary takes them): the seqs it printed, in order.
final class ReplicaSubscriber: Sendable {
    let label: String
    let process: ChildProcess

    init(_ label: String, topology: ReplicaTopology, events: [String], command: [String]) throws {
        self.label = label
        process = try topology.network.start(
            on: ReplicaTopology.client, CountriesBinary.path,
            [
                "events", "--since", "0", "--json", "--heartbeat-ms", "200", "--timeout", "1000",
                "--events", events.joined(separator: ","), "--command", command.joined(separator: ","),
            ])
    }

    /// The seqs of the events printed so far, in order.
    var seqs: [UInt64] {
        process.stdout.lines.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any]
            else { return nil }
            return (object["seq"] as? NSNumber)?.uint64Value
        }
    }

    func stop() { process.stop() }
}
