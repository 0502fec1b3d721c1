import Foundation

/// One condition of a txn: a key's field compared with a value. A key that does not exist has
/// an empty value and revisions and version 0, so `.createRevision(key, equals: 0)` means "absent".
public enum EtcdCompare: Sendable {
    /// The key's value is these bytes.
    case value(String, equals: Data)
    /// The key was created at this revision (0: the key does not exist).
    case createRevision(String, equals: Int64)
    /// The key was last changed at this revision.
    case modRevision(String, equals: Int64)
    /// The key has had this many puts since it was created.
    case version(String, equals: Int64)
    /// The key was last changed before this revision (absent keys count as 0).
    case modRevisionLess(String, than: Int64)
    /// The key was last changed after this revision.
    case modRevisionGreater(String, than: Int64)
}
