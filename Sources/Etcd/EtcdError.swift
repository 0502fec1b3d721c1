/// Why an etcd call failed, classified by what it means for the operation: whether it certainly
/// did not happen, may have happened, or was refused. docs/ARCHITECTURE.md lists which etcd
/// answer becomes which code.
public struct EtcdError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the failure means for the operation.
    public enum Code: Sendable {
        /// Nothing was sent (connect failed or was refused): the operation certainly did not
        /// happen.
        case unreachable
        /// A write was sent and no definite answer came (timeout, connection dropped, "request
        /// timed out", leader changed...): it may or may not have happened. Read it back.
        case outcomeUnknown
        /// The member answered that it has no leader or cannot reach quorum. For a txn only when
        /// etcd's answer proves nothing was proposed; otherwise a txn gets `outcomeUnknown`.
        case noQuorum
        /// etcd answered with a definite error (bad request, too many operations, too large):
        /// the operation did not happen, and sending it again will not help.
        case rejected
        /// The revision asked for (a watch's start, a range's revision) was compacted;
        /// `compactRevision` says the oldest one left when etcd said so.
        case compacted
        /// The answer was not what the gateway documents (for a txn: it may have happened).
        case badResponse
    }

    /// What the failure means for the operation.
    public var code: Code
    /// What went wrong, in etcd's or libcurl's words.
    public var message: String
    /// The endpoint that failed last (`""` when none was tried).
    public var endpoint: String
    /// With `compacted`: the compaction revision, when etcd said it (a watch does, a range not).
    public var compactRevision: Int64?

    /// An error of this code, message and endpoint.
    public init(_ code: Code, _ message: String, endpoint: String, compactRevision: Int64? = nil) {
        self.code = code
        self.message = message
        self.endpoint = endpoint
        self.compactRevision = compactRevision
    }

    public var description: String {
        let place = endpoint.isEmpty ? "" : " at \(endpoint)"
        let compaction = compactRevision.map { " (compacted up to revision \($0))" } ?? ""
        return "etcd \(code)\(place): \(message)\(compaction)"
    }
}
