/// What `countries relay` is told.
public struct RelayConfiguration: Sendable {
    /// The event endpoint to subscribe to: a service's, or another relay's.
    public var upstream: String
    /// Where the relay's own subscribers connect.
    public var downstream: String
    /// The relay's certificate and allow-lists: CURVE toward its subscribers (and its key
    /// toward the upstream when ``upstreamServerKey`` is set).
    public var security: ServerSecurity?
    /// The upstream's public key, to connect to it with CURVE (using the relay's own key).
    public var upstreamServerKey: String?
    /// Whether a plaintext downstream tcp endpoint that is not loopback is allowed.
    public var allowsInsecureEndpoints = false
    /// Messages held per subscriber (and from the upstream) before dropping, as in the service.
    public var highWaterMark: Int32 = 10_000
    /// What one subscriber connection may send before it is dropped, as on the service's
    /// event socket.
    public var subscriberBounds = SubscriberBounds()

    /// Creates a configuration.
    public init(upstream: String, downstream: String) {
        self.upstream = upstream
        self.downstream = downstream
    }
}
