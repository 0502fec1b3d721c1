/// The store cannot be used: what is wrong with it and what to do.
public struct StoreOpenError: Error, Equatable, Sendable {
    /// The kind of failure.
    public enum Code: String, Equatable, Sendable {
        /// The file or its directory cannot be opened or created.
        case cannotOpen = "cannot_open"
        /// The file is read-only (or on a read-only file system).
        case readOnly = "read_only"
        /// The file is not a countries store, or is damaged.
        case corrupt
        /// The disk is full.
        case full
        /// The store was written by a newer or unknown version.
        case unsupported
        /// Any other SQLite failure.
        case other
    }

    /// The kind of failure.
    public var code: Code
    /// The store's path.
    public var path: String
    /// What went wrong, for a person.
    public var message: String

    /// Creates an error for the store at `path`.
    public init(_ code: Code, path: String, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }
}

extension StoreOpenError: CustomStringConvertible {
    /// `store countries.db: <message>`.
    public var description: String { "store \(path): \(message)" }
}
