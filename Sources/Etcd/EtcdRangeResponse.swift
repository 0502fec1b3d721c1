/// The keys a range found, and the store's revision when it was read.
public struct EtcdRangeResponse: Sendable {
    /// The keys found, at most the request's limit (none for a count-only range).
    public var kvs: [EtcdKeyValue]
    /// How many keys are in the range, whatever the limit.
    public var count: Int64
    /// Whether the limit left keys out.
    public var more: Bool
    /// etcd's newest revision when it answered (the header's; inside a txn, the txn's): the
    /// revision a read of the latest was at, and later than the one a read at an older revision
    /// names.
    public var revision: Int64

    /// A response with these fields.
    public init(kvs: [EtcdKeyValue], count: Int64, more: Bool, revision: Int64) {
        self.kvs = kvs
        self.count = count
        self.more = more
        self.revision = revision
    }
}
