/// Why the service cannot start or go on.
public struct ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The part that failed.
    public enum Code: String, Sendable {
        /// The store cannot be opened or read.
        case store
        /// An endpoint cannot be bound.
        case bind
        /// ZeroMQ failed otherwise.
        case sockets
        /// The CURVE settings cannot be used (a key file, an allow-list directory).
        case security
        /// A plaintext endpoint would be exposed beyond this host (protected mode).
        case unsafeEndpoint
        /// Another service holds the store (one writer per store).
        case storeInUse
    }

    /// The part that failed.
    public var code: Code
    /// What went wrong and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
