import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesService
import CountriesSockets
import CountriesTerminal
import CountriesViews
import SystemSupport
import ZeroMQ

/// The exit codes scripts rely on, as sysexits(3) and swift-argument-parser have them, and the
/// one table that maps every error a subcommand throws to its code (``failure(for:)``): the
/// subcommands only throw.
public enum ExitCode {
    /// Done.
    public static let success: Int32 = 0
    /// The service refused the command (its message is on stderr).
    public static let refused: Int32 = 1
    /// The command line is wrong (EX_USAGE).
    public static let usage: Int32 = 64
    /// Input data (a seed file) is wrong (EX_DATAERR).
    public static let dataError: Int32 = 65
    /// The input named does not exist or is not what it should be: `backup`'s store (EX_NOINPUT).
    public static let noInput: Int32 = 66
    /// No reply from the service to a read after every try, or an endpoint cannot be bound
    /// (EX_UNAVAILABLE).
    public static let unavailable: Int32 = 69
    /// A bug: something that should not happen did (EX_SOFTWARE).
    public static let software: Int32 = 70
    /// A change's outcome is unknown: no try got its own reply, and one may have been applied;
    /// sending it again with the same `--id` is safe (EX_TEMPFAIL).
    public static let outcomeUnknown: Int32 = 75
    /// A key file cannot be written, or the store or pid file is held by another service
    /// (EX_CANTCREAT).
    public static let cantCreate: Int32 = 73
    /// The store cannot be opened, read or written (EX_IOERR).
    public static let ioError: Int32 = 74
    /// The CURVE settings cannot be used: a key file, an allow-list directory (EX_CONFIG).
    public static let config: Int32 = 78
    /// `on-change`'s command is a file that cannot be executed (as a shell says it).
    public static let notExecutable: Int32 = 126
    /// `on-change`'s command does not exist (as a shell says it).
    public static let commandNotFound: Int32 = 127

    /// How a command that threw ends: its exit code and what stderr says.
    public struct Failure: Equatable, Sendable {
        /// The process's exit status.
        public let code: Int32
        /// What went wrong and what to do.
        public let message: String
        /// Whether stderr says `countries: ` first; a usage error has its own format
        /// (swift-argument-parser's `Error: ...` and the usage).
        public let prefixed: Bool

        init(_ code: Int32, _ message: String, prefixed: Bool = true) {
            self.code = code
            self.message = message
            self.prefixed = prefixed
        }
    }

    /// The exit code for a refusal: `unavailable` (the change may or may not have been applied,
    /// after every endpoint and try) is temporary like no reply at all; the others are refusals.
    static func refusal(of reply: Reply) -> Int32 {
        reply.failure?.code == .unavailable ? unavailable : refused
    }

    /// The table: every typed error that reaches the command line, with its exit code and
    /// message. Each kind's cases are switched over without a default, so a new case does not
    /// compile until it has a code; a new error type falls to `software` until it is listed
    /// here (ExitCodeTableTests finds the public error types this table does not name).
    public static func failure(for error: any Error) -> Failure {
        switch error {
        case let error as UsageError:
            return Failure(usage, error.description, prefixed: false)
        case let error as CommandError:
            return Failure(code(of: error), error.message)
        case let error as KeyFileError:
            switch error.code {
            case .unusable: return Failure(config, error.message)
            case .exists: return Failure(refused, error.message)
            case .cannotWrite: return Failure(cantCreate, error.message)
            case .keyGeneration: return Failure(software, error.message)
            }
        case let error as PrivateFileError:
            // A secret file others may read (`web --token`), refused as a key file is.
            return Failure(config, error.description)
        case let error as SeedFileError:
            return Failure(error.unreadable ? noInput : dataError, error.message)
        case let error as PidFile.ClaimError:
            return Failure(cantCreate, error.description)
        case let error as ServiceError:
            // From starting `serve` or `relay`, or from the relay's loop (a relay has no store).
            switch error.code {
            case .store: return Failure(ioError, error.message)
            case .security: return Failure(config, error.message)
            case .unsafeEndpoint: return Failure(usage, error.message)
            case .bind, .sockets: return Failure(unavailable, error.message)
            case .storeInUse: return Failure(cantCreate, error.message)
            }
        case let error as StoreBackupError:
            switch error.code {
            case .noStore: return Failure(noInput, error.message)
            case .cannotRead: return Failure(ioError, error.message)
            case .exists, .refused: return Failure(refused, error.message)
            case .cannotWrite: return Failure(cantCreate, error.message)
            }
        case let error as ClientError:
            switch error.code {
            case .outcomeUnknown: return Failure(outcomeUnknown, error.message)
            case .noReply, .badReply, .sockets, .refused: return Failure(unavailable, error.message)
            }
        case let error as HistoryFetcher.Failure:
            switch error {
            case .unreachable(let error): return Failure(unavailable, error.message)
            case .refused(let error): return Failure(refused, error.message)
            }
        case let error as EventCommandRunner.Unrunnable:
            switch error {
            case .notFound: return Failure(commandNotFound, error.description)
            case .notExecutable: return Failure(notExecutable, error.description)
            }
        case let error as WebViewError:
            return Failure(unavailable, error.message)
        case is ZMQError, is SignalPipeError, is TerminalError:
            // A context, a signal pipe or a terminal that cannot be set up: not the user's doing.
            return Failure(software, "\(error)")
        default:
            return Failure(software, "\(error)")
        }
    }

    /// The codes of the command line's own failures.
    private static func code(of error: CommandError) -> Int32 {
        switch error {
        case .historyKeptGrowing, .metricsUnavailable: return unavailable
        case .selectNeedsTerminal: return usage
        // Endpoints are checked before (a mistake there is a usage error): what is left is a
        // want of descriptors or memory, as for a client's `sockets` error.
        case .unusableSubscription: return unavailable
        case .unreadableCursor: return dataError
        case .unwritableCursor: return cantCreate
        case .serviceStopped: return software
        }
    }
}
