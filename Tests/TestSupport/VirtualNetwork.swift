import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Hosts of our own (network namespaces, loopback up) joined by veth pairs, one private /30 per
/// pair: link i is SUBNET.i.0/30, .1 on its first host and .2 on its second. No routes, no
/// forwarding: a host reaches only its direct neighbours. Nothing is put in the root namespace;
/// ``remove()`` deletes every namespace, and the veth pairs go with them. Needs root.
public final class VirtualNetwork: Sendable {
    /// A veth pair between two hosts.
    public struct Link: Sendable {
        public let first: String
        public let second: String
        public let firstAddress: String
        public let secondAddress: String

        /// The interface on `host` that leads to `peer`: `to-PEER`.
        public func interface(on host: String) -> String {
            "to-" + (host == first ? second : first)
        }
    }

    public let links: [Link]
    private let namespaces: [String: String]
    private let ip: String

    /// `hosts` are short names (at most 8 characters); `links` join two of them each. Namespaces
    /// are named `PREFIX-HOST-PID-RANDOM`; addresses are in `SUBNET` (two octets).
    public init(
        hosts: [String], links pairs: [(String, String)], prefix: String = "cr", subnet: String = "10.204"
    ) throws {
        guard let ip = SystemTool.path("ip") else { throw HarnessFailure("no ip(8) here") }
        self.ip = ip
        let tag = "\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
        namespaces = Dictionary(uniqueKeysWithValues: hosts.map { ($0, "\(prefix)-\($0)-\(tag)") })
        links = pairs.enumerated().map { index, pair in
            Link(
                first: pair.0, second: pair.1, firstAddress: "\(subnet).\(index).1",
                secondAddress: "\(subnet).\(index).2")
        }
        do {
            for host in hosts {
                try Self.check(ip, ["netns", "add", namespace(host)])
                try run(on: host, ["link", "set", "lo", "up"])
            }
            for link in links {
                try run(
                    on: link.first,
                    [
                        "link", "add", link.interface(on: link.first), "type", "veth", "peer", "name",
                        link.interface(on: link.second), "netns", namespace(link.second),
                    ])
                for (host, address) in [(link.first, link.firstAddress), (link.second, link.secondAddress)] {
                    try run(on: host, ["addr", "add", "\(address)/30", "dev", link.interface(on: host)])
                    try run(on: host, ["link", "set", link.interface(on: host), "up"])
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

    private func link(_ a: String, _ b: String) -> Link {
        guard let link = links.first(where: { Set([$0.first, $0.second]) == Set([a, b]) }) else {
            preconditionFailure("no link \(a)-\(b)")
        }
        return link
    }

    /// The address of `host` on its link to `peer`.
    public func address(of host: String, toward peer: String) -> String {
        let link = link(host, peer)
        return host == link.first ? link.firstAddress : link.secondAddress
    }

    /// Takes both ends of the link between `a` and `b` down, or brings them back up.
    public func setLink(_ a: String, _ b: String, up: Bool) throws {
        let link = link(a, b)
        for host in [link.first, link.second] {
            try run(on: host, ["link", "set", link.interface(on: host), up ? "up" : "down"])
        }
    }

    /// Runs `ip -n NAMESPACE arguments...` for `host`; throws unless it succeeds.
    public func run(on host: String, _ arguments: [String]) throws {
        try Self.check(ip, ["-n", namespace(host)] + arguments)
    }

    /// Moves the calling thread (only it) into `host`'s network namespace, so sockets it opens,
    /// and threads it starts afterwards, live on that host. Meant for a thread of the test's own
    /// that ends with its work.
    public func enter(_ host: String) throws {
        try Self.enterNamespace(namespace(host), named: host)
    }

    /// Moves the calling thread into the network namespace `namespace` (shared with
    /// ``BridgedNetwork``); `host` names it in errors.
    static func enterNamespace(_ namespace: String, named host: String) throws {
        guard let setns = GNUExtensions.setns else { throw HarnessFailure("no setns(2) in this C library") }
        let fd = open("/var/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HarnessFailure("cannot open the namespace of \(host): errno \(errno)") }
        defer { close(fd) }
        // CLONE_NEWNET (sched.h, _GNU_SOURCE: not imported).
        guard setns(fd, 0x4000_0000) == 0 else {
            throw HarnessFailure("setns into \(host) failed: errno \(errno)")
        }
    }

    /// Deletes every namespace; the veth pairs go with them. Safe to call twice.
    public func remove() {
        Self.delete(Array(namespaces.values), ip: ip)
    }

    /// Deletes `namespaces` (what is in them goes with them), ignoring the ones already gone.
    static func delete(_ namespaces: [String], ip: String) {
        for namespace in namespaces {
            _ = try? ChildProcess.run(
                ip, ["netns", "del", namespace], environment: ProcessInfo.processInfo.environment,
                timeout: .seconds(10))
        }
    }

    /// Runs `ip arguments...`; throws unless it succeeds (shared with ``BridgedNetwork``).
    static func check(_ ip: String, _ arguments: [String]) throws {
        let result = try ChildProcess.run(ip, arguments, environment: ProcessInfo.processInfo.environment)
        guard result.exitCode == 0 else {
            throw HarnessFailure("\(([ip] + arguments).joined(separator: " ")) failed: \(result)")
        }
    }
}
