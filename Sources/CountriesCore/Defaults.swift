/// The settings a service, its clients and a relay agree on when nobody says otherwise,
/// written once: the command line's defaults (shown by `countries help <subcommand>`) and the
/// libraries' defaults both read these.
public enum Defaults {
    /// The SQLite store `serve` opens (and `backup` copies) when given no `--db`.
    public static let storePath = "countries.db"
    /// The etcd key prefix a replicated store lives under when given no `--etcd-prefix`.
    public static let etcdPrefix = "/countries/"
    /// Where the service accepts commands and clients send them (REQ/REP).
    public static let commandEndpoint = "tcp://127.0.0.1:5555"
    /// Where the service publishes events and subscribers follow them (PUB/SUB).
    public static let eventsEndpoint = "tcp://127.0.0.1:5556"
    /// Where a relay binds for its subscribers.
    public static let relayEndpoint = "tcp://127.0.0.1:5557"
    /// How often the service publishes a heartbeat; a subscriber that misses three goes stale.
    public static let heartbeatInterval: Duration = .seconds(1)
    /// How long a client waits for each reply.
    public static let requestTimeout: Duration = .seconds(2)
    /// How many times a client sends a request in all before giving up.
    public static let requestTries = 3
}

extension Duration {
    /// Whole milliseconds, as the command line takes periods.
    public var wholeMilliseconds: Int {
        Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000)
    }
}
