import CountriesCore
import Etcd

/// Where a replicated service keeps its state (`countries serve --etcd`): an etcd v3 cluster,
/// spoken to in gRPC for transactions and through its JSON gateway for the rest (docs/HA.md).
///
/// `import Etcd` for ``EtcdSecurity``.
public struct EtcdConfiguration: Sendable, Equatable {
    /// The client URLs of the cluster's members (`http://host:2379`), tried in turn.
    public var endpoints: [String]
    /// The prefix under which this service's keys live; replicas on one prefix are one service.
    public var prefix: String
    /// How long one etcd request may take before its outcome counts as unknown.
    public var requestTimeout: Duration = .seconds(1)
    /// How long without a quorum read before the replica stops heartbeats and refuses changes.
    public var quorumTimeout: Duration = .milliseconds(2_500)
    /// How long to wait for the cluster at start before giving up.
    public var startTimeout: Duration = .seconds(15)
    /// This replica's name in `status` and the log.
    public var replicaName: String
    /// TLS files and the etcd user every connection of the replica uses (docs/SECURITY.md).
    public var security = EtcdSecurity()

    /// Most bytes one etcd transaction may take as sent (its `TxnRequest` in protobuf): under
    /// etcd's default `--max-request-bytes` (1.5 MiB), which etcd checks on that message and a
    /// few bytes of header, with a third to spare (docs/HA.md, "Limits").
    public var requestBudget = EtcdConfiguration.defaultRequestBudget

    /// 1 MiB.
    public static let defaultRequestBudget = 1 << 20

    /// A configuration for these members.
    public init(endpoints: [String], prefix: String = Defaults.etcdPrefix, replicaName: String) {
        self.endpoints = endpoints
        self.prefix = prefix
        self.replicaName = replicaName
    }
}
