import CountriesCore

/// Everything `countries serve` can be told, with the defaults of DESIGN.md.
public struct ServiceConfiguration: Sendable {
    /// Where commands are accepted (REQ/REP; the service binds a ROUTER).
    public var commandEndpoint = "tcp://127.0.0.1:5555"
    /// Where events are published (PUB).
    public var eventsEndpoint = "tcp://127.0.0.1:5556"
    /// The SQLite file (`:memory:` for SQLite's in-memory database); nil keeps the state in
    /// memory only, without SQLite.
    public var storePath: String? = "countries.db"
    /// The list a new store starts from, and that `reset` puts back.
    public var seed: [Country] = SeedList.standard
    /// How often a heartbeat is published.
    public var heartbeatInterval: Duration = .seconds(1)
    /// The version `status` reports.
    public var version = "0.0.0"
    /// Most requests handled in one batch (one transaction, one fsync).
    public var maximumBatch = 256
    /// Messages held per subscriber before the PUB socket drops for that subscriber
    /// (ZMQ_SNDHWM): a slow subscriber loses events, never slows the service.
    public var subscriberHighWaterMark: Int32 = 10_000
    /// Largest frame the sockets accept (ZMQ_MAXMSGSIZE); a peer sending more is disconnected.
    public var maximumMessageBytes: Int64 = 1 << 20
    /// CURVE encryption and client allow-lists; nil serves plaintext.
    public var security: ServerSecurity?
    /// Whether plaintext tcp endpoints that are not loopback are allowed (`--insecure`).
    public var allowsInsecureEndpoints = false
    /// How long queued replies and events may linger at shutdown.
    public var lingerOnShutdown: Duration = .milliseconds(500)

    /// The defaults.
    public init() {}
}
