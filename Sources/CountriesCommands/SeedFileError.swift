/// Why the list `--seed` names cannot be used: the file cannot be read, or it is not a seed list.
/// `countries serve` exits 65 (EX_DATAERR, ExitCode.swift) with the message.
struct SeedFileError: Error, Equatable, Sendable {
    /// What is wrong and what to give instead.
    let message: String

    /// Creates an error with its message.
    init(_ message: String) {
        self.message = message
    }
}
