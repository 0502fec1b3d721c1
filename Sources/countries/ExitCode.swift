import CountriesCore

/// The exit codes scripts rely on, as sysexits(3) and swift-argument-parser have them.
enum ExitCode {
    /// Done.
    static let success: Int32 = 0
    /// The service refused the command (its message is on stderr).
    static let refused: Int32 = 1
    /// The command line is wrong (EX_USAGE).
    static let usage: Int32 = 64
    /// Input data (a seed file) is wrong (EX_DATAERR).
    static let dataError: Int32 = 65
    /// The input named does not exist or is not what it should be: `backup`'s store (EX_NOINPUT).
    static let noInput: Int32 = 66
    /// No reply from the service to a read after every try, or an endpoint cannot be bound
    /// (EX_UNAVAILABLE).
    static let unavailable: Int32 = 69
    /// A bug: something that should not happen did (EX_SOFTWARE).
    static let software: Int32 = 70
    /// A change's outcome is unknown: no try got its own reply, and one may have been applied;
    /// sending it again with the same `--id` is safe (EX_TEMPFAIL).
    static let outcomeUnknown: Int32 = 75
    /// A key file cannot be written, or the store or pid file is held by another service
    /// (EX_CANTCREAT).
    static let cantCreate: Int32 = 73
    /// The store cannot be opened, read or written (EX_IOERR).
    static let ioError: Int32 = 74
    /// The CURVE settings cannot be used: a key file, an allow-list directory (EX_CONFIG).
    static let config: Int32 = 78
    /// `on-change`'s command is a file that cannot be executed (as a shell says it).
    static let notExecutable: Int32 = 126
    /// `on-change`'s command does not exist (as a shell says it).
    static let commandNotFound: Int32 = 127
}

extension ExitCode {
    /// The exit code for a refusal: `unavailable` (the change may or may not have been applied,
    /// after every endpoint and try) is temporary like no reply at all; the others are refusals.
    static func failure(of reply: Reply) -> Int32 {
        reply.failure?.code == .unavailable ? unavailable : refused
    }
}

/// A failure that ends the command with a message and an exit code.
struct CommandFailure: Error {
    var message: String
    var exitCode: Int32
}
