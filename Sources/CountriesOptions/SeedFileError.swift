/// Why the list `--seed` names cannot be used: the file cannot be read, or it is not a seed list.
/// `countries serve` exits 65 (EX_DATAERR) with the message.
public struct SeedFileError: Error, Equatable, Sendable {
    /// What is wrong and what to give instead.
    public let message: String

    /// Creates an error with its message.
    public init(_ message: String) {
        self.message = message
    }
}
