import Foundation

/// One operation of a txn's branch.
public enum EtcdOperation: Sendable {
    /// Reads a range, at the txn's revision.
    case range(EtcdRangeRequest)
    /// Writes a value to a key.
    case put(String, Data)
    /// Writes a value to a key attached to a lease: etcd deletes the key when the lease ends.
    case putLeased(String, Data, lease: Int64)
    /// Deletes a key (`rangeEnd` nil) or the keys in `[key, rangeEnd)`.
    case deleteRange(key: String, rangeEnd: String?)
}

extension [EtcdOperation] {
    /// The bytes of the values these operations put: what an encoder reserves room for.
    var valueBytes: Int {
        reduce(0) { total, operation in
            switch operation {
            case .put(_, let value), .putLeased(_, let value, _): total + value.count
            default: total
            }
        }
    }
}
