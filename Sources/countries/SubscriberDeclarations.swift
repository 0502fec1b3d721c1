import ArgumentParsing
import CountriesOptions

// The names and help of the subscriber subcommands (their options: CountriesOptions), apart from
// their behaviour (EventsCommand.swift, SubscriberCommands.swift, OnChangeCommand.swift).

extension EventsCommand: Subcommand {
    static let name = "events"
    static let abstract = "Print events as they happen, one per line."
    static let discussion: String? = "Runs until interrupted, or until --count events have been printed."

    typealias Options = EventsOptions
    static var options: Options { Options(name: name) }
}

extension WatchCommand: Subcommand {
    static let name = "watch"
    static let abstract = "Show the list live; it redraws on every change."
    static let discussion: String? = """
        On a terminal: a live table (q quits). Otherwise, the whole table after every change, \
        or with --json one line per change: {"countries": [...], "seq": S}, the first being the snapshot.
        """

    typealias Options = WatchOptions
    static var options: Options { Options(name: name) }
}

extension SelectCommand: Subcommand {
    static let name = "select"
    static let abstract = "Pick countries in a live table; Space or Enter toggles."
    static let discussion: String? =
        "Keys: Up/Down or j/k, PgUp/PgDn, Home/End move; Space or Enter toggles; q quits."

    typealias Options = SelectOptions
    static var options: Options { Options(name: name) }
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

    typealias Options = OnChangeOptions
    static var options: Options { Options(name: name) }
}
