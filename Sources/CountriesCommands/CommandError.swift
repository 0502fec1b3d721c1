import CountriesClient
import CountriesSockets

/// A failure the command line finds itself, or a module's error where it means something else
/// than it does alone (a cursor file that cannot be read is bad data; one that cannot be
/// written, a file that cannot be created). Its exit codes are in ``ExitCode/failure(for:)``.
public enum CommandError: Error, Equatable {
    /// `history` kept growing while it was paged through.
    case historyKeptGrowing
    /// `select` was started without a terminal for its keys and screen.
    case selectNeedsTerminal
    /// `--metrics HOST:PORT` cannot be served there.
    case metricsUnavailable(authority: String)
    /// A subscriber's sockets cannot be set up: out of descriptors or memory (its endpoints
    /// and keys are checked before, as usage errors).
    case unusableSubscription(ClientError)
    /// `on-change --cursor FILE` cannot be read as a cursor.
    case unreadableCursor(CursorFile.Failure)
    /// `on-change --cursor FILE` cannot be written.
    case unwritableCursor(CursorFile.Failure)
    /// `serve`'s loop stopped on an error once it was serving: a bug.
    case serviceStopped(ServiceError)

    /// What went wrong and what to do.
    public var message: String {
        switch self {
        case .historyKeptGrowing:
            "the history kept growing while it was read; try again"
        case .selectNeedsTerminal:
            "select needs a terminal for its keys and screen; use `countries toggle` in scripts"
        case .metricsUnavailable(let authority):
            "cannot serve metrics on \(authority) (in use, or not an address of this machine); pick another --metrics"
        case .unusableSubscription(let error):
            error.message
        case .unreadableCursor(let failure), .unwritableCursor(let failure):
            failure.description
        case .serviceStopped(let error):
            error.message
        }
    }
}
