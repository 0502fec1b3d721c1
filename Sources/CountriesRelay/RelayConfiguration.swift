import CountriesCore
import CountriesSockets
import ZeroMQ

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
    /// Messages queued per subscriber before it misses them (ZMQ_SNDHWM), as in the service.
    public var highWaterMark: Int32 = 10_000
    /// Bytes one subscriber that stops reading can be left holding: no run of
    /// ``highWaterMark`` + 1 messages forwarded in a row is larger (``ForwardingWindow``).
    /// 24 MiB takes one reset of the largest list (``EventShape/maximumBodyBytes``, 16 MB)
    /// in a run, and any run of the other events (at most 2 KB each, 19 MB for 10,001); the
    /// relay besides holds what it is reading from the upstream (a message or two).
    public var subscriberBytes = 24 << 20
    /// Messages taken in from the upstream before the loop has read them (ZMQ_RCVHWM). Two:
    /// a message can be 16 MB, and with 1,000 a loaded machine that held the loop back let
    /// libzmq queue 33 frames of 8 MiB (282 MiB); past it the upstream holds them (its own
    /// bound). It halves the most the relay forwards in a burst (tens of thousands a second,
    /// still far above what a service publishes).
    public var upstreamHighWaterMark: Int32 = 2
    /// What one subscriber connection may send before it is dropped, as on the service's
    /// event socket.
    public var subscriberBounds = SubscriberBounds()

    /// Creates a configuration.
    public init(upstream: String, downstream: String) {
        self.upstream = upstream
        self.downstream = downstream
    }

    /// The window of ``subscriberBytes`` over the runs a subscriber can hold: its queue and
    /// the message its connection is writing. A message counts its frames' bytes and what
    /// libzmq spends on each frame besides (``HeldMessage/overheadPerFrame``).
    var forwardingWindow: ForwardingWindow {
        ForwardingWindow.forSubscribers(highWaterMark: highWaterMark, bytes: subscriberBytes)
    }
}
