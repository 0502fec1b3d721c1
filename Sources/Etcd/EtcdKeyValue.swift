import Foundation

/// A key and its value as etcd keeps them, with the revisions that order its changes.
public struct EtcdKeyValue: Equatable, Sendable {
    /// The key (ASCII by the project's convention; any UTF-8 is carried).
    public var key: String
    /// The value's bytes (empty for a keys-only range or a delete event).
    public var value: Data
    /// The revision of the put that created the key (since its last delete).
    public var createRevision: Int64
    /// The revision of the key's last change.
    public var modRevision: Int64
    /// How many puts the key has had since it was created (0 once deleted).
    public var version: Int64

    /// A key-value with these fields.
    public init(key: String, value: Data, createRevision: Int64, modRevision: Int64, version: Int64) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.version = version
    }
}
