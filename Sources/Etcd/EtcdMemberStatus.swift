/// One member's own view of the cluster: who it is, who it takes for the leader, at which term.
public struct EtcdMemberStatus: Sendable {
    /// The endpoint asked.
    public var endpoint: String
    /// The member's ID.
    public var memberID: UInt64
    /// The leader's ID as this member knows it; 0 when it knows none.
    public var leaderID: UInt64
    /// The raft term.
    public var raftTerm: UInt64
    /// The member's etcd version.
    public var version: String
    /// The store's revision when the member answered (read before ``raftAppliedIndex``).
    public var revision: Int64 = 0
    /// The last raft entry the member applied. Every change of revision is an entry of its own,
    /// and some entries change none (compactions, membership, auth), so `raftAppliedIndex -
    /// revision` never decreases in a cluster's life; a restore from a snapshot keeps the
    /// revision and starts a new raft log, so it makes that difference drop.
    public var raftAppliedIndex: UInt64 = 0

    /// Whether this member is the leader.
    public var isLeader: Bool { leaderID != 0 && leaderID == memberID }

    /// A status with these fields.
    public init(endpoint: String, memberID: UInt64, leaderID: UInt64, raftTerm: UInt64, version: String) {
        self.endpoint = endpoint
        self.memberID = memberID
        self.leaderID = leaderID
        self.raftTerm = raftTerm
        self.version = version
    }
}
