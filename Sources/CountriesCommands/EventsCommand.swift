import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesTerminal

/// `countries events`: print each change as it happens, in seq order, none twice and none
/// missed. It follows the one subscription machine `watch` uses, and an ``EventFeed`` fills
/// what the machine's snapshots skip from `history`; when that is impossible (history gone, or
/// another store) it says so on stderr and goes on from the service's seq.
struct EventsCommand: Subcommand {
    static let name = "events"
    static let abstract = "Print events as they happen, one per line."
    static let discussion: String? = "Runs until interrupted, or until --count events have been printed."
    static var options: Options { Options(name: name) }

    /// The options of `countries events`.
    struct Options: SubscriberOptions {
        let since = CommonOptions.seq(
            "since", help: "First print the kept events after this seq, then follow.")
        let count = CommonOptions.count(
            help: "Exit (0) after printing this many events; restarts said on stderr do not count.")
        let json = Option(
            flag: "json", help: "Print each event's JSON on one line.", environment: "COUNTRIES_JSON")
        let heartbeat = CommonOptions.heartbeat
        let connection: ConnectionOptions

        /// The options of the subcommand called `name`.
        init(name: String) { connection = .subscriber(name) }
    }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let asJSON = command[\.json]
        let since = command[\.since]
        let limit = command[\.count] ?? Int.max
        let setup = try SubscriberSetup(command)
        var feed = EventFeed(start: since.map { .after(.init(store: nil, seq: $0)) } ?? .now)
        var printed = 0
        try setup.follow { update, following in
            let deliveries = try feed.deliveries(
                for: update.notifications, replica: update.replica, store: update.store,
                history: following.history)
            for delivery in deliveries where printed < limit {
                switch delivery {
                case .event(let event):
                    if asJSON {
                        Output.json(event.encoded())
                    } else {
                        Output.line(ReplyText.event(event, glyphs: Output.glyphs))
                    }
                    printed += 1
                case .restart(let state, let reason):
                    Output.error(reason.describe(now: state.seq))
                }
            }
            return printed < limit
        }
        return ExitCode.success
    }
}
