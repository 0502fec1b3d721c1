import CountriesCore
import SystemSupport
import ZeroMQ

/// A REQ client sending toggles that counts the replies that are refusals, by error code
/// (`storage_error` when replicas competed for the seq, say): runs that want none count them.
public struct CheckedRequestClient: RoundTripper {
    private var inner: RequestClient
    private let refused: Locked<[String: Int]>

    /// A toggling client of the row `index` modulo 8, adding each refusal to `refused`.
    public init(context: Context, endpoint: String, index: Int, refused: Locked<[String: Int]>) throws {
        inner = try RequestClient(context: context, endpoint: endpoint, index: index, body: serviceToggleBody)
        self.refused = refused
    }

    public mutating func roundTrip() throws {
        try inner.roundTrip()
        guard let body = inner.lastReply, let reply = try? Reply.decode(body) else { return }
        refused.count(refusal: reply)
    }
}

extension Locked where Value == [String: Int] {
    /// Adds `reply` to the refusals by error code, if it is one.
    func count(refusal reply: Reply) {
        guard !reply.ok else { return }
        withLock { $0[reply.error?.code ?? "?", default: 0] += 1 }
    }
}
