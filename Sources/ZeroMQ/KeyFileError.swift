/// A CURVE key file cannot be read or written: what is wrong with it and what to do.
public struct KeyFileError: Error, Equatable, Sendable {
    /// The kind of failure.
    public enum Code: Equatable, Sendable {
        /// The file cannot be read, is not a key file, holds only a public key where the secret
        /// one is needed, or is open to group or others.
        case unusable
        /// `keygen` would overwrite an existing key file without `--force`.
        case exists
        /// The key file cannot be created or written.
        case cannotWrite
        /// libzmq could not make a key pair (it was built without CURVE).
        case keyGeneration
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
}
