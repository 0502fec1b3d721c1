import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries watch`: the data source. A live table on a terminal; otherwise the whole table
/// (or, with `--json`, the whole list as one JSON line) after every change.
struct WatchCommand: Subcommand {
    static let name = "watch"
    static let abstract = "Show the list live; it redraws on every change."
    static let discussion: String? = """
        On a terminal: a live table (q quits). Otherwise, the whole table after every change, \
        or with --json one line per change: {"countries": [...], "seq": S}, the first being the snapshot.
        """
    static var options: Options { Options(name: name) }

    /// The options of `countries watch`.
    struct Options: SubscriberOptions {
        let json = Option(
            flag: "json", help: "Print the whole list as one JSON line after every change.",
            environment: "COUNTRIES_JSON")
        let count = CommonOptions.count(
            help:
                "Exit (0) after printing the list this many times, the list at start being the first (with --json or when not on a terminal)."
        )
        let heartbeat = CommonOptions.heartbeat
        let connection: ConnectionOptions

        /// The options of the subcommand called `name`.
        init(name: String) { connection = .subscriber(name) }
    }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let terminal = Terminal()
        let onScreen = !command[\.json] && terminal.outputIsTerminal && terminal.inputIsTerminal
        let limit = command[\.count]
        // A COUNTRIES_COUNT meant for scripts does not stop the live table; a --count typed does.
        if onScreen, limit != nil, command.parsed.source("count") == .commandLine {
            throw command.usageError(
                "--count counts printed lists: give --json too, or send the output to a file or pipe")
        }
        let setup = try SubscriberSetup(command, keepsStates: !onScreen)
        if onScreen {
            try setup.screen(.watch, toggles: nil, terminal: terminal)
            return ExitCode.success
        }
        let asJSON = command[\.json]
        var printed = 0
        try setup.follow { update, following in
            for state in update.states.prefix((limit ?? Int.max) - printed) {
                // A stop waits for one list, not for every list of the update.
                if following.stopRequested() { return false }
                show(state, store: update.store, asJSON: asJSON)
                printed += 1
            }
            return printed < limit ?? Int.max
        }
        return ExitCode.success
    }

    /// Prints one state: the list as one JSON line, or the table.
    private func show(_ state: CountriesState, store: String?, asJSON: Bool) {
        if asJSON {
            Output.json(state.snapshotJSON(store: store))
        } else {
            for line in TableText.block(state, glyphs: Output.glyphs) { Output.line(line) }
        }
    }
}
