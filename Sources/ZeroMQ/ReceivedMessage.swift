import Foundation

/// A message with the metadata properties that were asked for.
public struct ReceivedMessage: Sendable, Equatable {
    /// The frames, in order.
    public var frames: [Data]
    /// The properties found on the message, by name (absent ones are left out).
    public var properties: [String: String]
    /// The descriptor of the connection it came over (`ZMQ_SRCFD`), for a message that came
    /// over the wire; nil for one made locally. With `"Peer-Address"` it names the peer that
    /// sent it, where the socket type has no routing id (an XPUB's subscriptions). libzmq owns
    /// the descriptor and may close it, and the number be reused, at any time.
    public var sourceDescriptor: Int32?

    /// Creates a received message.
    public init(frames: [Data], properties: [String: String] = [:], sourceDescriptor: Int32? = nil) {
        self.frames = frames
        self.properties = properties
        self.sourceDescriptor = sourceDescriptor
    }
}
