/// `countries backup` could not make its copy: what went wrong and what to do. Nothing is left
/// at the backup's path when it is thrown (an existing file there is untouched).
public struct StoreBackupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Equatable, Sendable {
        /// There is no store at the path given, or it is not a countries store.
        case noStore
        /// The store cannot be opened or read (busy for too long, damaged, unreadable).
        case cannotRead
        /// A file is at the backup's path and `--force` was not given.
        case exists
        /// The backup's path may never be written: a symbolic link, a directory, the store itself.
        case refused
        /// The copy cannot be created, written or put in place.
        case cannotWrite
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do, for a person; it names the file.
    public var message: String

    /// An error of this kind with its message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
