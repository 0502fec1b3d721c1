import CountriesCore
import Foundation

/// What the service answered, for `status` (`commands_served`, `commands_refused`), and the
/// warning each refusal is worth, at most 100 lines in 10 s: shared by the handler and its
/// commit path, so every answer is counted once, where it is sent.
final class AnswerTally {
    private(set) var served = 0
    private(set) var refused = 0
    private var refusalLog = RefusalLog(window: .seconds(10), perWindow: 100)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// A request answered as it asked (or by its first reply).
    func countServed() { served += 1 }

    /// A refusal of the request, counted and logged; `op` names the change refused.
    func refuse(_ error: CountriesError, op: String?) -> Reply {
        count(Reply(error: error), op: op)
        return Reply(error: error)
    }

    /// Counts a reply that goes out: served when it is a success, else refused and logged.
    func count(_ reply: Reply, op: String?) {
        guard !reply.ok else {
            served += 1
            return
        }
        refused += 1
        // A flood of bad requests must not become a flood of log lines.
        let error = reply.error ?? Reply.ErrorBody(code: "?", message: "?")
        let line = "refused\(op.map { " \($0)" } ?? ""): \(error.code): \(error.message)"
        if let line = refusalLog.record(line, now: .now) { logger.log(.warning, line) }
    }
}

@available(*, unavailable) extension AnswerTally: Sendable {}
