/// What a txn did: which branch it took, the revision after it, and each operation's result.
public struct EtcdTxnResponse: Sendable {
    /// Whether every compare held (the success branch ran) or not (the failure branch ran).
    public var succeeded: Bool
    /// The store's revision after the txn (unchanged when the branch wrote nothing).
    public var revision: Int64
    /// The results of the branch's operations, in order.
    public var results: [EtcdOperationResult]

    /// A response with these fields.
    public init(succeeded: Bool, revision: Int64, results: [EtcdOperationResult]) {
        self.succeeded = succeeded
        self.revision = revision
        self.results = results
    }
}
