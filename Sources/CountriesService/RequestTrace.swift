import CountriesCore
import Foundation

/// What the service knows of one request for its log line and its metrics: the op, the id,
/// the peer's address (when the transport gives one) and when it was read. Made only when
/// something reads it (a debug log, or metrics): otherwise ``none``.
struct RequestTrace {
    /// The op, or nil when the request did not decode.
    var op: String?
    /// The request's id, if it has one.
    var id: String?
    /// The peer's address (`Peer-Address` of a tcp connection), when known.
    var peer: String?
    /// When the service read it.
    var received: ContinuousClock.Instant?

    /// A trace of nothing, for an answer nobody logs or counts by request.
    static let none = RequestTrace()

    /// The same request, now known to be `request`.
    func naming(_ request: Request) -> RequestTrace {
        var named = self
        named.op = request.command.op
        named.id = request.id
        return named
    }
}
