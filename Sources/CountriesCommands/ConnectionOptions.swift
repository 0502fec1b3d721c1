import ArgumentParsing
import CountriesCore

/// The connection options, declared once. Every subcommand that talks to a service takes all
/// of them (listed under CONNECTION OPTIONS in its help), so one alias or script can pass the
/// same set to any of them; a command that has no use for one says so in its help and
/// ignores it (README.md, "Commands for scripts").
struct ConnectionOptions: OptionGroup {
    /// Whether the command follows the event endpoint (a subscriber); the others only send
    /// requests to the command endpoint.
    let followsEvents: Bool

    let command: Option<String>
    let events: Option<String>
    let timeout: Option<Duration>
    let retries: Option<Int>
    let curveKey: Option<String?>
    let serverKey: Option<String?>
    let eventsServerKey: Option<String?>

    /// The group for a command that only sends requests: the event options say they are unused.
    static func requests(by name: String) -> ConnectionOptions {
        ConnectionOptions(name: name, followsEvents: false)
    }

    /// The group for a subscriber, which uses every option.
    static func subscriber(_ name: String) -> ConnectionOptions {
        ConnectionOptions(name: name, followsEvents: true)
    }

    private init(name: String, followsEvents: Bool) {
        self.followsEvents = followsEvents
        let unused = "Accepted so every client command takes the same options; unused by \(name)."
        let section = "CONNECTION OPTIONS"
        command = CommonOptions.checkedEndpoints(
            Option(
                "command", value: "endpoint",
                help:
                    "The service's command endpoint (REQ/REP), or its replicas' as A,B,... (tried in turn).",
                default: Defaults.commandEndpoint, environment: "COUNTRIES_COMMAND", section: section),
            list: true)
        let events = Option(
            "events", value: "endpoint",
            help: followsEvents
                ? "The service's event endpoint (PUB/SUB) or a relay's, or its replicas' as A,B,... (all followed)."
                : unused,
            default: Defaults.eventsEndpoint, environment: "COUNTRIES_EVENTS", section: section)
        // Only subscribers read --events; the others accept any value and ignore it.
        self.events = followsEvents ? CommonOptions.checkedEndpoints(events, list: true) : events
        timeout = Option(
            integer: "timeout", value: "ms", help: "How long to wait for each reply, in milliseconds.",
            default: Defaults.requestTimeout.wholeMilliseconds, environment: "COUNTRIES_TIMEOUT",
            section: section
        ).map { (milliseconds, command) throws(UsageError) in
            guard milliseconds > 0 else {
                throw command.usageError("--timeout must be a positive number of milliseconds")
            }
            return .milliseconds(milliseconds)
        }
        retries = Option(
            integer: "retries", value: "n",
            help:
                "How many times to send a request in all before giving up (same request id each time; at least once to each --command endpoint).",
            default: Defaults.requestTries, environment: "COUNTRIES_RETRIES", section: section
        ).map { (tries, command) throws(UsageError) in
            guard tries >= 1 else { throw command.usageError("--retries must be at least 1") }
            return tries
        }
        curveKey = Option(
            "curve-key", value: "file",
            help: "This client's secret key file (from `countries keygen`), for a service that uses CURVE.",
            environment: "COUNTRIES_CURVE_KEY", section: section)
        serverKey = Option(
            "server-key", value: "file", help: "The service's key file (its .pub).",
            environment: "COUNTRIES_SERVER_KEY", section: section)
        eventsServerKey = Option(
            "events-server-key", value: "file",
            help: followsEvents
                ? "The key of a relay at --events, when it has its own (default: --server-key; one key for every endpoint listed)."
                : unused,
            environment: "COUNTRIES_EVENTS_SERVER_KEY", section: section)
    }
}

/// The options of a command that talks to a service.
protocol ConnectedOptions: OptionGroup {
    var connection: ConnectionOptions { get }
}

/// The options of a command that follows the event stream.
protocol SubscriberOptions: ConnectedOptions {
    /// The service's heartbeat period (``CommonOptions/heartbeat``).
    var heartbeat: Option<Duration> { get }
}

/// The options of a one-shot client subcommand.
protocol RequestOptions: ConnectedOptions {
    var json: Option<Bool> { get }
    /// The group with the connection options for one command (the memberwise init).
    init(connection: ConnectionOptions)
}
