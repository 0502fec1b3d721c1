import ArgumentParsing

// The declarations of the subscriber subcommands, apart from their behaviour
// (EventsCommand.swift, SubscriberCommands.swift, OnChangeCommand.swift).

extension EventsCommand: Subcommand {
    static let name = "events"
    static let abstract = "Print events as they happen, one per line."
    static let discussion: String? = "Runs until interrupted, or until --count events have been printed."

    struct Options: SubscriberOptions {
        let since = CommonOptions.seq(
            "since", help: "First print the kept events after this seq, then follow.")
        let count = Option(integer: "count", value: "n", help: "Stop after this many events.").map {
            (count, command) throws(UsageError) in
            if let count, count < 1 { throw command.usageError("--count must be at least 1") }
            return count
        }
        let json = Option(flag: "json", help: "Print each event's JSON on one line.")
        let heartbeat = CommonOptions.heartbeat
        let connection = ConnectionOptions.subscriber(EventsCommand.name)
    }
    static var options: Options { Options() }
}

extension WatchCommand: Subcommand {
    static let name = "watch"
    static let abstract = "Show the list live; it redraws on every change."
    static let discussion: String? = """
        On a terminal: a live table (q quits). Otherwise, the whole table after every change, \
        or with --json one line per change: {"countries": [...], "seq": S}, the first being the snapshot.
        """

    struct Options: SubscriberOptions {
        let json = Option(flag: "json", help: "Print the whole list as one JSON line after every change.")
        let heartbeat = CommonOptions.heartbeat
        let connection = ConnectionOptions.subscriber(WatchCommand.name)
    }
    static var options: Options { Options() }
}

extension SelectCommand: Subcommand {
    static let name = "select"
    static let abstract = "Pick countries in a live table; Space or Enter toggles."
    static let discussion: String? =
        "Keys: Up/Down or j/k, PgUp/PgDn, Home/End move; Space or Enter toggles; q quits."

    struct Options: SubscriberOptions {
        let heartbeat = CommonOptions.heartbeat
        let connection = ConnectionOptions.subscriber(SelectCommand.name)
    }
    static var options: Options { Options() }
}

extension OnChangeCommand: Subcommand {
    static let name = "on-change"
    static let abstract = "Run a command for every change, in order."
    static let discussion: String? = """
        COMMAND runs once per event, never two at once, with COUNTRIES_SEQ, COUNTRIES_EVENT \
        (changed, added, removed, reset), COUNTRY_INDEX, COUNTRY_NAME and COUNTRY_VISITED in its \
        environment and the event's JSON on its stdin. A failing command is logged; the next event still runs.
        """
    static let trailingValueName: String? = "command"

    struct Options: SubscriberOptions {
        let initial = Option(
            flag: "initial", help: "Also run once (as a reset) for the list as it is at start.")
        let cursor = Option(
            "cursor", value: "file",
            help:
                "Keep the store and the last seq whose command finished in this file; on start, run for every change since (or once as a reset when they are gone)."
        )
        let heartbeat = CommonOptions.heartbeat
        let connection = ConnectionOptions.subscriber(OnChangeCommand.name)
    }
    static var options: Options { Options() }
}
