/// What ``Socket/receiveFrames(dontWait:properties:sourceDescriptor:_:)`` reads of a message
/// besides its frames.
public struct MessageMetadata: Sendable, Equatable {
    /// The properties found on the message, by name (absent ones are left out).
    public var properties: [String: String]
    /// The descriptor of the connection it came over (``ReceivedMessage/sourceDescriptor``).
    public var sourceDescriptor: Int32?

    /// Creates the metadata of a message.
    public init(properties: [String: String] = [:], sourceDescriptor: Int32? = nil) {
        self.properties = properties
        self.sourceDescriptor = sourceDescriptor
    }
}
