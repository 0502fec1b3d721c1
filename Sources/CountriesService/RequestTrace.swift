import CountriesCore
import Foundation

/// What the service knows of one request for its log line and its metrics: the op, the id,
/// the peer's address (when the transport gives one) and when it was read. Made only when
/// something reads it (a debug log, or metrics): otherwise ``none``.
///
/// A value, kept in one reference that ``none`` leaves nil: a request's trace is copied into
/// its staged change and its answers, and four optional fields cost four reference counts per
/// copy even when nobody reads them (docs/BENCHMARKS.md, "Stop 48").
struct RequestTrace {
    /// The fields, shared between copies until one changes them.
    private final class Fields {
        var op: String?
        var id: String?
        var peer: String?
        var received: ContinuousClock.Instant?

        init(copying other: Fields?) {
            op = other?.op
            id = other?.id
            peer = other?.peer
            received = other?.received
        }
    }

    private var fields: Fields?

    /// A trace with these fields; with none, a trace of nothing (no storage at all).
    init(
        op: String? = nil, id: String? = nil, peer: String? = nil, received: ContinuousClock.Instant? = nil
    ) {
        guard op != nil || id != nil || peer != nil || received != nil else { return }
        let fields = Fields(copying: nil)
        (fields.op, fields.id, fields.peer, fields.received) = (op, id, peer, received)
        self.fields = fields
    }

    private init(fields: Fields?) {
        self.fields = fields
    }

    /// A trace of nothing, for an answer nobody logs or counts by request. Not `RequestTrace()`:
    /// testing its optional `ContinuousClock.Instant` for nil goes through the type's value
    /// witnesses, 1.5% of the service's main thread at 16 clients (docs/BENCHMARKS.md, "Stop 49").
    static var none: RequestTrace { RequestTrace(fields: nil) }

    /// The op, or nil when the request did not decode.
    var op: String? {
        get { fields?.op }
        set { update { $0.op = newValue } }
    }

    /// The request's id, if it has one.
    var id: String? {
        get { fields?.id }
        set { update { $0.id = newValue } }
    }

    /// The peer's address (`Peer-Address` of a tcp connection), when known.
    var peer: String? {
        get { fields?.peer }
        set { update { $0.peer = newValue } }
    }

    /// When the service read it.
    var received: ContinuousClock.Instant? {
        get { fields?.received }
        set { update { $0.received = newValue } }
    }

    /// The same request, now known to be `request`.
    func naming(_ request: Request) -> RequestTrace {
        var named = self
        named.op = request.command.op
        named.id = request.id
        return named
    }

    /// Changes the fields of this copy alone.
    private mutating func update(_ change: (Fields) -> Void) {
        // False for nil too: a trace of nothing gets fields of its own.
        if !isKnownUniquelyReferenced(&fields) { fields = Fields(copying: fields) }
        if let fields { change(fields) }
    }
}
