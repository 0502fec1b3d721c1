import CountriesCore
import Foundation

/// A change's request id as the store remembers it: what the change asked and the reply it got,
/// so that a retry gets the same reply and the id reused for another change gets `conflict`.
public struct RememberedRequest: Equatable, Sendable {
    /// The client's request id.
    public var id: String
    /// What the change asked (``CountriesCore/Change/canonicalForm``); nil for ids remembered
    /// by schema 1, before it was kept: any request under such an id gets its reply.
    public var request: [UInt8]?
    /// The reply first sent, byte for byte. Arrays, as the service's request path makes them
    /// (docs/BENCHMARKS.md, "Stop 58").
    public var reply: [UInt8]
    /// The seq of the event the change made: a store may keep a reset's reply as a reference to
    /// its event instead of the list a second time.
    public var eventSeq: UInt64? = nil

    /// Remembers `id` with what it asked and the reply it got.
    public init(id: String, request: [UInt8]? = nil, reply: [UInt8], eventSeq: UInt64? = nil) {
        self.id = id
        self.request = request
        self.reply = reply
        self.eventSeq = eventSeq
    }
}

extension RememberedRequest {
    /// What it takes in a store: its id, request and reply.
    public var bytes: Int { id.utf8.count + (request?.count ?? 0) + reply.count }

    /// The answer to a change sent under this id: its first reply, or `conflict` when the id
    /// was first used for another change (`asked` is ``CountriesCore/Change/canonicalForm``).
    public func answer(toChangeAsking asked: [UInt8]?) -> Result<[UInt8], CountriesError> {
        if let first = request, first != asked {
            return .failure(
                CountriesError(
                    .conflict,
                    "this id was used for another request (\(describedRequest)); use a new id for a new request"
                ))
        }
        return .success(reply)
    }

    /// The request the id was first used for, for a `conflict` message: its canonical JSON,
    /// cut short (it holds a client's name, which may be long).
    private var describedRequest: String {
        let text = request.map { String(decoding: $0, as: UTF8.self) } ?? "?"
        return CountryName.quoted(text).dropFirst().dropLast().description
    }
}
