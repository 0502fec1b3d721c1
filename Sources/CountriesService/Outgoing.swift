import CountriesCore
import Foundation

/// What the socket loop must send, in order, after a batch is handled.
enum Outgoing: Equatable {
    /// A reply frame for the request with this envelope.
    case reply(envelope: [Data], body: [UInt8])
    /// An event to publish (already committed): its topic, its seq and its encoding (the bytes
    /// the store kept). Not the event itself: the loop reads no more, and each copy of an event
    /// retains and releases its row's name and the store's identity.
    case publish(topic: Topic, seq: UInt64, body: [UInt8])
}
