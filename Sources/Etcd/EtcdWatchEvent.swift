/// One change a watch saw.
public struct EtcdWatchEvent: Equatable, Sendable {
    /// Whether the key was written or deleted.
    public enum Kind: Equatable, Sendable {
        case put
        case delete
    }

    /// Whether the key was written or deleted.
    public var kind: Kind
    /// The key after the change; for a delete, the key and the delete's `modRevision` only.
    public var kv: EtcdKeyValue

    /// An event of this kind.
    public init(kind: Kind, kv: EtcdKeyValue) {
        self.kind = kind
        self.kv = kv
    }
}
