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

    /// Deletes every namespace. Safe to call twice.
    func remove() { network.remove() }
}
