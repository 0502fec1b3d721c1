import ArgumentParsing

/// The whole command line of `countries`, declared in one place: help, usage errors and
/// parsing all come from here.
enum CountriesCommandLine {
    static let version = "0.1.0"

    static let json = OptionSpec.flag("json", help: "Print the service's JSON reply on one line.")

    /// The subcommands that follow the event endpoint; every other client subcommand only
    /// sends requests to the command endpoint.
    static let subscriberNames: Set<String> = ["events", "watch", "select", "on-change"]

    /// The connection options, declared once. Every subcommand that talks to a service takes all
    /// of them (listed under CONNECTION OPTIONS in its help), so one alias or script can pass the
    /// same set to any of them; a command that has no use for one says so in its help and
    /// ignores it (README.md, "Commands for scripts").
    static func connectionOptions(for command: String) -> [OptionSpec] {
        let followsEvents = subscriberNames.contains(command)
        let unused = "Accepted so every client command takes the same options; unused by \(command)."
        let section = "CONNECTION OPTIONS"
        return [
            OptionSpec(
                name: "command", valueName: "endpoint", help: "The service's command endpoint (REQ/REP).",
                defaultValue: "tcp://127.0.0.1:5555", environment: "COUNTRIES_COMMAND", section: section),
            OptionSpec(
                name: "events", valueName: "endpoint",
                help: followsEvents
                    ? "The service's event endpoint (PUB/SUB), or a relay's." : unused,
                defaultValue: "tcp://127.0.0.1:5556", environment: "COUNTRIES_EVENTS", section: section),
            OptionSpec(
                name: "timeout", valueName: "ms", help: "How long to wait for each reply, in milliseconds.",
                defaultValue: "2000", section: section),
            OptionSpec(
                name: "retries", valueName: "n",
                help: "How many times to send a request in all before giving up (same request id each time).",
                defaultValue: "3", section: section),
            OptionSpec(
                name: "curve-key", valueName: "file",
                help:
                    "This client's secret key file (from `countries keygen`), for a service that uses CURVE.",
                environment: "COUNTRIES_CURVE_KEY", section: section),
            OptionSpec(
                name: "server-key", valueName: "file", help: "The service's public key file (its .pub).",
                environment: "COUNTRIES_SERVER_KEY", section: section),
            OptionSpec(
                name: "events-server-key", valueName: "file",
                help: followsEvents
                    ? "The public key of a relay at --events, when it has its own (default: --server-key)."
                    : unused,
                environment: "COUNTRIES_EVENTS_SERVER_KEY", section: section),
        ]
    }

    static let heartbeat = OptionSpec(
        name: "heartbeat-ms", valueName: "ms",
        help: "The service's heartbeat period; 3 missed make the view stale.", defaultValue: "1000")

    static let target = ArgumentSpec(
        name: "target", help: "A country: its 0-based index or its name (case-insensitive).")

    static let root = CommandSpec(
        name: "countries",
        abstract: "A list of countries with a visited flag, served over ZeroMQ.",
        discussion: """
            Run the service with `countries serve`, then change and watch the list from any terminal \
            or script. Exit codes: 0 success, 1 the service refused the command, 64 usage error, \
            69 no reply from the service.
            """,
        subcommands: [
            serve, list, get, count, toggle, set, add, remove, reset, history, status, events, watch, select,
            onChange, keygen, relay,
        ])

    static let serve = CommandSpec(
        name: "serve",
        abstract: "Run the state service.",
        discussion: """
            Owns the list, answers commands on the command endpoint and publishes every change on the \
            event endpoint. Stops cleanly on SIGINT or SIGTERM.
            """,
        options: [
            OptionSpec(
                name: "command", valueName: "endpoint", help: "Where to accept commands (REQ/REP).",
                defaultValue: "tcp://127.0.0.1:5555", environment: "COUNTRIES_COMMAND"),
            OptionSpec(
                name: "events", valueName: "endpoint", help: "Where to publish events (PUB/SUB).",
                defaultValue: "tcp://127.0.0.1:5556", environment: "COUNTRIES_EVENTS"),
            OptionSpec(
                name: "db", valueName: "path",
                help: "The SQLite store (owner-only; one service per store, held by PATH.lock).",
                defaultValue: "countries.db"),
            .flag("in-memory", help: "Keep the state in memory only (lost when the service stops)."),
            OptionSpec(
                name: "seed", valueName: "list",
                help:
                    "The list a new store starts from and `reset` puts back: default, world, or a FILE (JSON array or one name per line).",
                defaultValue: "default"),
            OptionSpec(
                name: "heartbeat-ms", valueName: "ms", help: "Heartbeat period.", defaultValue: "1000"),
            OptionSpec(
                name: "log-level", valueName: "level", help: "The least severe level logged.",
                defaultValue: "info",
                allowedValues: ["debug", "info", "warning", "error"]),
            OptionSpec(
                name: "curve-key", valueName: "file",
                help:
                    "The service's secret key file: turns on CURVE encryption on both endpoints (needs --allow)."
            ),
            OptionSpec(
                name: "allow", valueName: "dir",
                help: "A directory of client .pub keys that may read and change.",
                isRepeating: true),
            OptionSpec(
                name: "allow-read", valueName: "dir",
                help: "A directory of client .pub keys that may only read and subscribe.", isRepeating: true),
            .flag(
                "insecure",
                help:
                    "Allow plaintext tcp endpoints that are not loopback (anyone who reaches them can change the list)."
            ),
            OptionSpec(
                name: "log-format", valueName: "format",
                help: "text for people, json (one object per line) for collectors.", defaultValue: "text",
                allowedValues: ["text", "json"]),
            OptionSpec(
                name: "pidfile", valueName: "path",
                help:
                    "Write the process id here, held while serving (another serve with it exits 73); removed at a clean exit."
            ),
        ])

    static let keygen = CommandSpec(
        name: "keygen", abstract: "Make a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub.",
        discussion: """
            Give NAME.pub to the other side: a client's goes in the service's --allow directory, the \
            service's is every client's --server-key. Keep NAME.key private.
            """,
        arguments: [
            ArgumentSpec(
                name: "name", help: "The file name to write, without extension (may include a directory).")
        ],
        options: [.flag("force", help: "Overwrite existing key files.")])

    static let list = CommandSpec(
        name: "list", abstract: "Print every country, in order.",
        options: [json] + connectionOptions(for: "list"))
    static let get = CommandSpec(
        name: "get", abstract: "Print one country.", arguments: [target],
        options: [json] + connectionOptions(for: "get"))
    static let count = CommandSpec(
        name: "count", abstract: "Print how many countries there are.",
        options: [json] + connectionOptions(for: "count"))
    static let ifStore = OptionSpec(
        name: "if-store", valueName: "id",
        help: "Only if the service runs on this store (its `store` id; else: conflict).")
    static let toggle = CommandSpec(
        name: "toggle", abstract: "Flip the visited flag of one or more countries.",
        arguments: [ArgumentSpec(name: "target", help: target.help, isRepeating: true)],
        options: [
            json,
            OptionSpec(
                name: "if-seq", valueName: "seq",
                help: "Only if the list is still at this seq (else: conflict)."),
            ifStore,
        ] + connectionOptions(for: "toggle"))
    static let set = CommandSpec(
        name: "set", abstract: "Set the visited flag of a country.",
        arguments: [target],
        options: [
            OptionSpec(
                name: "visited", valueName: "bool", help: "The new value.", allowedValues: ["true", "false"],
                isRequired: true),
            OptionSpec(
                name: "if-seq", valueName: "seq",
                help: "Only if the list is still at this seq (else: conflict)."),
            ifStore,
            json,
        ] + connectionOptions(for: "set"))
    static let add = CommandSpec(
        name: "add", abstract: "Append a country to the list.",
        arguments: [ArgumentSpec(name: "name", help: "The country's name (1 to 100 characters).")],
        options: [.flag("visited", help: "Add it as visited."), ifStore, json] + connectionOptions(for: "add")
    )
    static let remove = CommandSpec(
        name: "remove", abstract: "Remove a country; the rows after it move up one.",
        arguments: [target], options: [ifStore, json] + connectionOptions(for: "remove"))
    static let reset = CommandSpec(
        name: "reset", abstract: "Put back the list the service was started with.",
        options: [ifStore, json] + connectionOptions(for: "reset"))
    static let history = CommandSpec(
        name: "history", abstract: "Print the events after a seq.",
        options: [
            OptionSpec(
                name: "since", valueName: "seq", help: "Print the events after this seq.", defaultValue: "0"),
            json,
        ] + connectionOptions(for: "history"))
    static let status = CommandSpec(
        name: "status", abstract: "Print the service's status.",
        options: [json] + connectionOptions(for: "status"))
    static let events = CommandSpec(
        name: "events", abstract: "Print events as they happen, one per line.",
        discussion: "Runs until interrupted, or until --count events have been printed.",
        options: [
            OptionSpec(
                name: "since", valueName: "seq",
                help: "First print the kept events after this seq, then follow."),
            OptionSpec(name: "count", valueName: "n", help: "Stop after this many events."),
            OptionSpec.flag("json", help: "Print each event's JSON on one line."),
        ] + [heartbeat] + connectionOptions(for: "events"))

    static let watch = CommandSpec(
        name: "watch", abstract: "Show the list live; it redraws on every change.",
        discussion: """
            On a terminal: a live table (q quits). Otherwise, the whole table after every change, \
            or with --json one line per change: {"countries": [...], "seq": S}, the first being the snapshot.
            """,
        options: [OptionSpec.flag("json", help: "Print the whole list as one JSON line after every change.")]
            + [heartbeat] + connectionOptions(for: "watch"))
    static let select = CommandSpec(
        name: "select", abstract: "Pick countries in a live table; Space or Enter toggles.",
        discussion: "Keys: Up/Down or j/k, PgUp/PgDn, Home/End move; Space or Enter toggles; q quits.",
        options: [heartbeat] + connectionOptions(for: "select"))
    static let onChange = CommandSpec(
        name: "on-change", abstract: "Run a command for every change, in order.",
        discussion: """
            COMMAND runs once per event, never two at once, with COUNTRIES_SEQ, COUNTRIES_EVENT \
            (changed, added, removed, reset), COUNTRY_INDEX, COUNTRY_NAME and COUNTRY_VISITED in its \
            environment and the event's JSON on its stdin. A failing command is logged; the next event still runs.
            """,
        options: [
            .flag("initial", help: "Also run once (as a reset) for the list as it is at start."),
            OptionSpec(
                name: "cursor", valueName: "file",
                help:
                    "Keep the store and the last seq whose command finished in this file; on start, run for every change since (or once as a reset when they are gone)."
            ),
        ]
            + [heartbeat] + connectionOptions(for: "on-change"),
        acceptsTrailingArguments: true, trailingValueName: "command")

    static let relay = CommandSpec(
        name: "relay", abstract: "Forward the event stream to more subscribers (XSUB/XPUB proxy).",
        discussion: """
            Subscribers point --events at the relay and --command at the service. With --curve-key the \
            relay requires CURVE from its subscribers (--allow/--allow-read), and with --server-key it \
            also uses its key toward a CURVE upstream, whose allow-list must hold the relay's .pub.
            """,
        options: [
            OptionSpec(
                name: "from", valueName: "endpoint",
                help: "The event endpoint to follow (a service or a relay).",
                defaultValue: "tcp://127.0.0.1:5556", environment: "COUNTRIES_EVENTS"),
            OptionSpec(
                name: "bind", valueName: "endpoint", help: "Where subscribers connect.",
                defaultValue: "tcp://127.0.0.1:5557"),
            OptionSpec(name: "curve-key", valueName: "file", help: "The relay's secret key file."),
            OptionSpec(
                name: "server-key", valueName: "file",
                help: "The upstream's public key file (for a CURVE upstream)."),
            OptionSpec(
                name: "allow", valueName: "dir", help: "A directory of subscriber .pub keys to admit.",
                isRepeating: true),
            OptionSpec(
                name: "allow-read", valueName: "dir", help: "Same as --allow (a relay only reads).",
                isRepeating: true),
            .flag("insecure", help: "Allow a plaintext --bind that is not loopback."),
            OptionSpec(
                name: "log-level", valueName: "level", help: "The least severe level logged.",
                defaultValue: "info",
                allowedValues: ["debug", "info", "warning", "error"]),
        ])
}
