/// A transaction encoded once, as ``EtcdClient/txn(_:)`` sends it (etcd's `TxnRequest` in
/// protobuf, framed for gRPC): its size can be budgeted against etcd's `--max-request-bytes`
/// before it is sent, without encoding it a second time to send it.
public struct EtcdEncodedTxn: Sendable {
    /// The body: the gRPC frame's prefix and the message.
    let body: [UInt8]

    /// The transaction of these compares and operations.
    public init(compare: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation]) {
        body = GRPCFraming.framed(EtcdProtobufWire.txn(compare: compare, success: success, failure: failure))
    }

    /// The message's bytes: what etcd checks against its request limit, but for the few bytes of
    /// the header it adds before proposing it.
    public var byteCount: Int { body.count - GRPCFraming.prefixBytes }
}
