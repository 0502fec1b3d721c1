import CountriesCore
import SystemSupport

/// The requests `countries web` refused before serving them (a `Host` it does not serve, a page
/// on another site, a missing or wrong token: 400, 401, 403), counted by status for the
/// metrics and logged at warning a few at a time (``RefusalLog``): an attack is the operator's
/// to know of, and a flood of them must not flood the log. Recorded by the server's threads.
final class WebRefusals: Sendable {
    private struct State {
        var counts: [Int: UInt64] = [:]
        var log = RefusalLog(noun: "refused requests")
    }

    private let state = Locked(State())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// A request for `path` refused with `status`, for `reason` (the answer's text).
    func record(status: Int, method: String, path: String, reason: String) {
        let shownPath = VisibleText.escaped(String(path.prefix(100)))
        let line = state.withLock { state -> String? in
            state.counts[status, default: 0] += 1
            return state.log.record("refused \(method) \(shownPath) (\(status)): \(reason)", now: .now)
        }
        if let line { logger.log(.warning, line) }
    }

    /// The refusals so far, by HTTP status.
    var counts: [Int: UInt64] { state.withLock { $0.counts } }
}
