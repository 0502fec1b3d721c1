/// Why the list `--seed` names cannot be used: the file cannot be read (`countries serve` exits
/// 66, EX_NOINPUT), or it is not a seed list (65, EX_DATAERR; ExitCode.swift).
struct SeedFileError: Error, Equatable, Sendable {
    /// What is wrong and what to give instead.
    let message: String
    /// Whether the file could not be read at all (missing, or not readable), rather than read
    /// and found not to be a list.
    let unreadable: Bool

    /// Creates an error with its message.
    init(_ message: String, unreadable: Bool = false) {
        self.message = message
        self.unreadable = unreadable
    }
}
