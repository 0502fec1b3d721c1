/// A transaction encoded once, as ``EtcdClient/txn(_:)`` sends it (the JSON body, keys and
/// values in base64): its size can be budgeted against etcd's `--max-request-bytes` before it
/// is sent, without encoding it a second time to send it.
public struct EtcdEncodedTxn: Sendable {
    /// The body.
    let body: [UInt8]

    /// The transaction of these compares and operations.
    public init(compare: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation]) {
        body = EtcdWire.txn(compare: compare, success: success, failure: failure)
    }

    /// The bytes sent: what etcd's request limit is checked against (base64 included).
    public var byteCount: Int { body.count }
}
