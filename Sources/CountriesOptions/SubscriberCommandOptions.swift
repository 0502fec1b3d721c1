import ArgumentParsing
import CountriesWeb

// The options of the subscriber subcommands (`events`, `watch`, `select`, `on-change`); their
// names and help are in SubcommandDeclarations.swift, their runs in the executable.

/// `countries events`.
public struct EventsOptions: SubscriberOptions {
    public let since = CommonOptions.seq(
        "since", help: "First print the kept events after this seq, then follow.")
    public let count = CommonOptions.count(
        help: "Exit (0) after printing this many events; restarts said on stderr do not count.")
    public let json = Option(
        flag: "json", help: "Print each event's JSON on one line.", environment: "COUNTRIES_JSON")
    public let heartbeat = CommonOptions.heartbeat
    public let connection: ConnectionOptions

    /// The options of the subcommand called `name`.
    public init(name: String) { connection = .subscriber(name) }
}

/// `countries watch`.
public struct WatchOptions: SubscriberOptions {
    public let json = Option(
        flag: "json", help: "Print the whole list as one JSON line after every change.",
        environment: "COUNTRIES_JSON")
    public let count = CommonOptions.count(
        help:
            "Exit (0) after printing the list this many times, the list at start being the first (with --json or when not on a terminal)."
    )
    public let heartbeat = CommonOptions.heartbeat
    public let connection: ConnectionOptions

    /// The options of the subcommand called `name`.
    public init(name: String) { connection = .subscriber(name) }
}

/// `countries select`.
public struct SelectOptions: SubscriberOptions {
    public let heartbeat = CommonOptions.heartbeat
    public let connection: ConnectionOptions

    /// The options of the subcommand called `name`.
    public init(name: String) { connection = .subscriber(name) }
}

/// `countries on-change`.
public struct OnChangeOptions: SubscriberOptions {
    public let initial = Option(
        flag: "initial", help: "Also run once (as a reset) for the list as it is at start.",
        environment: "COUNTRIES_INITIAL")
    public let cursor = Option(
        "cursor", value: "file",
        help:
            "Keep the store and the last seq whose command finished in this file; on start, run for every change since (or once as a reset when they are gone).",
        environment: "COUNTRIES_CURSOR")
    public let heartbeat = CommonOptions.heartbeat
    public let connection: ConnectionOptions

    /// The options of the subcommand called `name`.
    public init(name: String) { connection = .subscriber(name) }
}

/// `countries web`.
public struct WebOptions: SubscriberOptions {
    public let listen = Option(
        "listen", value: "host:port", help: "Where browsers connect (an IP address and a port).",
        default: "127.0.0.1:8080", environment: "COUNTRIES_LISTEN"
    ).map { (text, command) throws(UsageError) -> WebListenAddress in
        guard let address = WebListenAddress(text) else {
            throw command.usageError(
                "--listen takes HOST:PORT with an IP address, like 127.0.0.1:8080 or [::1]:8080")
        }
        return address
    }
    public let token = Option(
        "token", value: "file",
        help:
            "A private file (mode 0600) whose first line every page must present: open the page once with ?token=..., and it is kept in a cookie.",
        environment: "COUNTRIES_TOKEN")
    public let insecure = Option(
        flag: "insecure",
        help: "Allow a --listen that is not loopback (anyone who reaches it sees the list).",
        environment: "COUNTRIES_INSECURE")
    public let allowHost = Option(
        repeating: "allow-host", value: "name",
        help:
            "A host name pages may use besides IP addresses and localhost (repeatable); any other name in Host is refused (DNS rebinding).",
        environment: "COUNTRIES_ALLOW_HOST"
    ).map { (names, command) throws(UsageError) -> [String] in
        for name in names where WebRequestGuard.hostName(ofAuthority: name) != name.lowercased() {
            throw command.usageError(
                "--allow-host takes a host name without a port, like countries.example; not \(name)")
        }
        return names
    }
    public let connectionsPerAddress = Option(
        integer: "connections-per-address", value: "n",
        help:
            "The most connections one client address may hold (each open page holds one); raise it for pages behind a proxy.",
        default: 256, environment: "COUNTRIES_CONNECTIONS_PER_ADDRESS"
    ).map { (count, command) throws(UsageError) -> Int in
        guard count >= 1 else { throw command.usageError("--connections-per-address must be at least 1") }
        return count
    }
    public let heartbeat = CommonOptions.heartbeat
    public let connection: ConnectionOptions

    /// The options of the subcommand called `name`.
    public init(name: String) { connection = .subscriber(name) }
}
