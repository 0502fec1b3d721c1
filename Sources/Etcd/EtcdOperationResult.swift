/// What one operation of the branch a txn took answered, in the order of the operations.
public enum EtcdOperationResult: Sendable {
    /// The keys a range read.
    case range(EtcdRangeResponse)
    /// A put was done.
    case put
    /// A delete was done; this many keys were deleted.
    case deleteRange(deleted: Int64)
}
