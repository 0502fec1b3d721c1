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
    /// The key's bytes when they are not UTF-8, nil otherwise. ``key`` is then their reading
    /// with U+FFFD for each bad sequence, which names no key a client of this module writes:
    /// one such key (anyone's who can write to etcd) made every read and watch that covered it
    /// fail. Paging goes on from these bytes (``EtcdRangeRequest/next(after:)``).
    public var keyBytes: [UInt8]?

    /// A key-value with these fields.
    public init(
        key: String, value: Data, createRevision: Int64, modRevision: Int64, version: Int64,
        keyBytes: [UInt8]? = nil
    ) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.version = version
        self.keyBytes = keyBytes
    }

    /// The key read from `bytes`: its text, and its bytes when they are not UTF-8.
    static func key(from bytes: some Collection<UInt8>) -> (key: String, keyBytes: [UInt8]?) {
        if let text = String(validating: bytes, as: UTF8.self) { return (text, nil) }
        return (String(decoding: bytes, as: UTF8.self), Array(bytes))
    }
}
