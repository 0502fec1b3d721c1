import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Hosts of our own (network namespaces) on switched LANs: a "switch" namespace holds one
/// bridge per LAN, and each host has one veth interface per LAN it is on, named after the LAN,
/// whose other end is a port of that LAN's bridge. Each LAN is a private /24 (`SUBNET.N`, N the
/// host's place in `hosts` plus 1); a host reaches every host on its LANs and no other (no
/// routes, no forwarding). The sibling of ``VirtualNetwork`` (point-to-point /30s) for
/// topologies where many hosts share a wire, such as an etcd cluster and its clients.
///
/// Faults cut one host's link to one LAN (``setLink(_:_:up:)``: the host's end down, so it
/// neither sends nor receives there), as pulling its cable would. Nothing is put in the root
/// namespace; ``remove()`` deletes every namespace, and the veth pairs and bridges go with them.
/// Needs root.
public final class BridgedNetwork: Sendable {
    /// One LAN: its name (at most 8 characters: the bridge and every host's interface on it are
    /// named after it) and its /24 (three octets).
    public struct LAN: Sendable {
        public let name: String
        public let subnet: String

        public init(_ name: String, subnet: String) {
            self.name = name
            self.subnet = subnet
        }
    }

    public let lans: [LAN]
    /// Each host's LANs, by host name.
    public let hostLANs: [String: [String]]
    private let hostOrder: [String]
    private let namespaces: [String: String]
    private let switchNamespace: String
    private let ip: String

    /// `hosts` are short names (at most 6 characters), each with the names of the LANs it is on.
    /// Namespaces are named `PREFIX-HOST-PID-RANDOM`, the switch's `PREFIX-sw-PID-RANDOM`.
    public init(lans: [LAN], hosts: [(String, [String])], prefix: String = "cb") throws {
        guard let ip = SystemTool.path("ip") else { throw HarnessFailure("no ip(8) here") }
        self.ip = ip
        self.lans = lans
        hostOrder = hosts.map(\.0)
        hostLANs = Dictionary(uniqueKeysWithValues: hosts)
        let tag = "\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
        namespaces = Dictionary(uniqueKeysWithValues: hosts.map { ($0.0, "\(prefix)-\($0.0)-\(tag)") })
        switchNamespace = "\(prefix)-sw-\(tag)"
        do {
            try VirtualNetwork.check(ip, ["netns", "add", switchNamespace])
            try VirtualNetwork.check(ip, ["-n", switchNamespace, "link", "set", "lo", "up"])
            for lan in lans {
                try VirtualNetwork.check(
                    ip, ["-n", switchNamespace, "link", "add", lan.name, "type", "bridge"])
                try VirtualNetwork.check(ip, ["-n", switchNamespace, "link", "set", lan.name, "up"])
            }
            for (host, hostLANs) in hosts {
                try VirtualNetwork.check(ip, ["netns", "add", namespace(host)])
                try run(on: host, ["link", "set", "lo", "up"])
                for name in hostLANs {
                    let port = "\(host)-\(name)"
                    try run(
                        on: host,
                        ["link", "add", name, "type", "veth", "peer", "name", port, "netns", switchNamespace])
                    try VirtualNetwork.check(
                        ip, ["-n", switchNamespace, "link", "set", port, "master", name, "up"])
                    try run(on: host, ["addr", "add", "\(address(of: host, on: name))/24", "dev", name])
                    try run(on: host, ["link", "set", name, "up"])
                }
            }
        } catch {
            remove()
            throw error
        }
    }

    /// The namespace of `host`.
    public func namespace(_ host: String) -> String {
        guard let namespace = namespaces[host] else { preconditionFailure("no host \(host)") }
        return namespace
    }

    /// The address of `host` on LAN `lan`.
    public func address(of host: String, on lan: String) -> String {
        guard let subnet = lans.first(where: { $0.name == lan })?.subnet,
            let index = hostOrder.firstIndex(of: host), hostLANs[host]?.contains(lan) == true
        else { preconditionFailure("\(host) is not on \(lan)") }
        return "\(subnet).\(index + 1)"
    }

    /// Takes `host`'s link to `lan` down (its cable pulled: nothing in or out there), or
    /// brings it back up (its address and route come back with it).
    public func setLink(_ host: String, _ lan: String, up: Bool) throws {
        try run(on: host, ["link", "set", lan, up ? "up" : "down"])
    }

    /// Runs `ip -n NAMESPACE arguments...` for `host`; throws unless it succeeds.
    public func run(on host: String, _ arguments: [String]) throws {
        try VirtualNetwork.check(ip, ["-n", namespace(host)] + arguments)
    }

    /// Starts `executable arguments...` on `host` (`ip netns exec`, which execs it: the pid is
    /// the program's own, so ``ChildProcess/stop(signal:grace:)`` and ``ChildProcess/crash()``
    /// reach it).
    public func start(
        on host: String, _ executable: String, _ arguments: [String],
        environment: [String: String] = CountriesBinary.environment,
        stdout: ChildProcess.Output = .capture, stderr: ChildProcess.Output = .capture
    ) throws -> ChildProcess {
        try ChildProcess(
            ip, ["netns", "exec", namespace(host), executable] + arguments, environment: environment,
            stdout: stdout, stderr: stderr)
    }

    /// Runs `executable arguments...` on `host` to its end; killed and thrown over after `timeout`.
    public func run(
        on host: String, _ executable: String, _ arguments: [String],
        environment: [String: String] = CountriesBinary.environment, timeout: Duration = .seconds(15)
    ) throws -> Execution {
        try start(on: host, executable, arguments, environment: environment).finish(timeout: timeout)
    }

    /// Moves the calling thread (only it) into `host`'s network namespace, so sockets it opens,
    /// and threads it starts afterwards (a ZeroMQ context's I/O threads, if the context is made
    /// on it), live on that host. Meant for a thread of the test's own that ends with its work.
    public func enter(_ host: String) throws {
        try VirtualNetwork.enterNamespace(namespace(host), named: host)
    }

    /// Deletes every namespace; the veth pairs and bridges go with them. Safe to call twice.
    public func remove() {
        VirtualNetwork.delete(Array(namespaces.values) + [switchNamespace], ip: ip)
    }
}
