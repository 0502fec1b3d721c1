import CountriesClient
import CountriesCore
import SystemSupport
import ZeroMQ

/// A client of replicas as the project's own clients are: a ``CommandClient`` given every
/// replica's endpoint, starting at the `index`-th modulo their number. It asks `status` which
/// replica writes and sends its toggles there (docs/PROTOCOL.md, "Clients of replicas"), and
/// counts the replies that are refusals, by error code (`storage_error` when replicas competed
/// for the seq, say): runs that want none count them.
public struct ReplicaToggler: RoundTripper {
    private let client: CommandClient
    private let row: Int
    private let refused: Locked<[String: Int]>

    /// A toggling client of the row `index` modulo 8, adding each refusal to `refused`.
    public init(context: Context, endpoints: [String], index: Int, refused: Locked<[String: Int]>) {
        let start = index % endpoints.count
        client = CommandClient(context: context, endpoints: Array(endpoints[start...] + endpoints[..<start]))
        row = index % 8
        self.refused = refused
    }

    public mutating func roundTrip() throws {
        refused.count(refusal: try client.send(.change(.toggle(.index(row)))))
    }
}
