import CountriesCore
import Foundation

/// What the socket loop must send, in order, after a batch is handled.
enum Outgoing: Equatable {
    /// A reply frame for the request with this envelope.
    case reply(envelope: [Data], body: Data)
    /// An event to publish (already committed), with its encoding (the bytes the store kept).
    case publish(Event, body: Data)
}
