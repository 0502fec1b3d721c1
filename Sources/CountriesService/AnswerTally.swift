import CountriesCore
import CountriesSockets
import Foundation
import SystemSupport

/// What the service answered, for `status` (`commands_served`, `commands_refused`) and the
/// metrics (requests by op and code), with a log line per request at debug: shared by the
/// handler and its commit path, so every answer is counted once, where it is sent.
///
/// A refusal is the client's doing unless the store failed (`storage_error`, `unavailable`):
/// those are warnings, at most 100 lines in 10 s; the others are only the request's debug line.
final class AnswerTally {
    private(set) var served = 0
    private(set) var refused = 0
    /// Requests taken and not answered: their peers read nothing while the service held its
    /// bound of unread replies in all (``ReplyAdmission/drop``).
    private(set) var dropped = 0
    /// Answers by op and code, when ``countsRequests`` (the metrics are on).
    private(set) var requests: [RequestCount: UInt64] = [:]
    /// Whether answers are counted by op and code, and traces made for them.
    var countsRequests = false
    private var refusalLog = RefusalLog(window: .seconds(10), perWindow: 100)
    private let logger: Logger

    /// One series of the requests counter.
    struct RequestCount: Hashable, Sendable {
        /// The op, or `invalid` for a request that did not decode.
        var op: String
        /// `ok`, or the error's code.
        var code: String
    }

    init(logger: Logger) {
        self.logger = logger
    }

    /// Whether answers need a ``RequestTrace``: a debug log or the metrics read them.
    var traces: Bool { countsRequests || logger.logs(.debug) }

    /// A request answered as it asked (or by its first reply); `seq` is the state's.
    func countServed(_ trace: RequestTrace, seq: UInt64?) {
        served += 1
        if traces { record(trace, code: "ok", seq: seq) }
    }

    /// A retry answered from its id's memory, `reply` as it is sent (the first reply, or a
    /// `conflict` for an id used for another change): counted by what it says, and the debug
    /// line of a replayed success says so and gives the seq the change was applied at, so that
    /// an operator following an id sees where it went. Retries are rare: the bytes are read back.
    func countReplay(_ trace: RequestTrace, reply: [UInt8]) {
        let decoded = try? Reply.decode(Data(reply))
        if let decoded, !decoded.ok { return count(decoded, trace) }
        served += 1
        if traces { record(trace, code: "ok", seq: decoded?.seq, replayed: true) }
    }

    /// A refusal of the request, counted and logged.
    func refuse(_ error: CountriesError, _ trace: RequestTrace, seq: UInt64? = nil) -> Reply {
        let reply = Reply(error: error)
        count(reply, trace, seq: seq)
        return reply
    }

    /// A request taken and not answered (``ReplyAdmission/drop``): counted under the code
    /// `dropped`, and logged as a warning (at most 100 lines in 10 s), since the service is at
    /// its bound for every client.
    func drop(_ trace: RequestTrace, reason: String) {
        dropped += 1
        if traces { record(trace, code: "dropped", seq: nil, message: reason) }
        let line = "dropped\(trace.op.map { " \($0)" } ?? "") unanswered: \(reason)"
        if let line = refusalLog.record(line, now: .now) { logger.log(.warning, line) }
    }

    /// What the tally reads of a reply: a staged change keeps this, not its whole reply, which
    /// each copy of the change retained and released a dozen references of.
    struct Outcome {
        let ok: Bool
        let seq: UInt64?
        let error: Reply.ErrorBody?

        init(_ reply: Reply) {
            ok = reply.ok
            seq = reply.seq
            error = reply.ok ? nil : reply.error
        }
    }

    /// Counts a reply that goes out: served when it is a success, else refused.
    func count(_ reply: Reply, _ trace: RequestTrace, seq: UInt64? = nil) {
        count(Outcome(reply), trace, seq: seq)
    }

    /// Counts a reply that goes out by its outcome: served when it is a success, else refused.
    func count(_ outcome: Outcome, _ trace: RequestTrace, seq: UInt64? = nil) {
        guard !outcome.ok else {
            served += 1
            if traces { record(trace, code: "ok", seq: outcome.seq ?? seq) }
            return
        }
        refused += 1
        let error = outcome.error ?? Reply.ErrorBody(code: "?", message: "?")
        if traces { record(trace, code: error.code, seq: outcome.seq ?? seq, message: error.message) }
        // The client's own mistakes are its debug line; only the store's failures are the
        // operator's concern. A flood of them must not become a flood of log lines.
        guard
            error.code == CountriesError.Code.storageError.rawValue
                || error.code == CountriesError.Code.unavailable.rawValue
        else { return }
        let line = "refused\(trace.op.map { " \($0)" } ?? ""): \(error.code): \(error.message)"
        if let line = refusalLog.record(line, now: .now) { logger.log(.warning, line) }
    }

    /// Counts the answer by op and code, and logs it at debug with its fields.
    private func record(
        _ trace: RequestTrace, code: String, seq: UInt64?, message: String? = nil, replayed: Bool = false
    ) {
        if countsRequests { requests[RequestCount(op: trace.op ?? "invalid", code: code), default: 0] += 1 }
        guard logger.logs(.debug) else { return }
        var fields = [LogField("op", .text(trace.op ?? "invalid"))]
        if let id = trace.id { fields.append(LogField("id", .text(id))) }
        if let peer = trace.peer { fields.append(LogField("peer", .text(peer))) }
        if let seq { fields.append(LogField("seq", .integer(Int64(clamping: seq)))) }
        fields.append(LogField("code", .text(code)))
        if replayed { fields.append(LogField("replayed", .text("yes"))) }
        if let received = trace.received {
            let elapsed = ContinuousClock.now - received
            fields.append(LogField("duration_ms", .number(Double(elapsed / .nanoseconds(1)) / 1_000_000)))
        }
        if let message { fields.append(LogField("error", .text(message))) }
        logger.log(.debug, "request", fields: fields)
    }
}

@available(*, unavailable) extension AnswerTally: Sendable {}
