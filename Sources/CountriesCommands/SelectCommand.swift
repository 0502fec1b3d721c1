import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesTerminal

/// `countries select`: the interactive delegate: a cursor over the live table; Space or Enter
/// toggles the country under it.
struct SelectCommand: Subcommand {
    static let name = "select"
    static let abstract = "Pick countries in a live table; Space or Enter toggles."
    static let discussion: String? =
        "Keys: Up/Down or j/k, PgUp/PgDn, Home/End move; Space or Enter toggles; q quits."
    static var options: Options { Options(name: name) }

    /// The options of `countries select`.
    struct Options: SubscriberOptions {
        let heartbeat = CommonOptions.heartbeat
        let connection: ConnectionOptions

        /// The options of the subcommand called `name`.
        init(name: String) { connection = .subscriber(name) }
    }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let terminal = Terminal()
        guard terminal.inputIsTerminal, terminal.outputIsTerminal else {
            throw CommandError.selectNeedsTerminal
        }
        let setup = try SubscriberSetup(command)
        let toggles = PendingRequests<IndexedCountry>(
            context: setup.context, endpoints: setup.options.commandEndpoints, timeout: setup.options.timeout,
            tries: setup.options.tries, security: setup.options.security)
        try setup.screen(.select, toggles: toggles, terminal: terminal)
        return ExitCode.success
    }
}
