import ArgumentParsing
import CountriesClient
import CountriesCore
import Foundation

/// `countries on-change -- COMMAND [ARGS...]`: the side-effect delegate (the seed's
/// EmailComposer): runs COMMAND once per applied event, in seq order, never two at once.
///
/// COMMAND gets `COUNTRIES_SEQ`, `COUNTRIES_EVENT` (`changed`, `added`, `removed`, `reset`),
/// `COUNTRY_INDEX`, `COUNTRY_NAME`, `COUNTRY_VISITED` in its environment and the event's JSON on
/// its stdin. After a gap it runs for every missed event (from `history`), or once with
/// `COUNTRIES_EVENT=reset` and the whole list when the history is gone or the store changed.
/// With `--cursor FILE` the position survives restarts: the file holds the store and the last
/// seq whose command finished, and a new run starts after it. A stop asked while COMMAND runs
/// waits for it (``EventCommandRunner/Ending``); a second one ends it, its seq not done.
struct OnChangeCommand: Subcommand {
    static let name = "on-change"
    static let abstract = "Run a command for every change, in order."
    static let discussion: String? = """
        COMMAND runs once per event, never two at once, with COUNTRIES_SEQ, COUNTRIES_EVENT \
        (changed, added, removed, reset), COUNTRY_INDEX, COUNTRY_NAME and COUNTRY_VISITED in its \
        environment and the event's JSON on its stdin. A failing command is logged; the next event still runs. \
        SIGINT or SIGTERM while COMMAND runs waits for it, then stops; a second one sends it SIGTERM \
        and that event is not done (--cursor runs it again).
        """
    static let trailingValueName: String? = "command"
    static var options: Options { Options(name: name) }

    /// The options of `countries on-change`.
    struct Options: SubscriberOptions {
        let initial = Option(
            flag: "initial", help: "Also run once (as a reset) for the list as it is at start.",
            environment: "COUNTRIES_INITIAL")
        let cursor = Option(
            "cursor", value: "file",
            help:
                "Keep the store and the last seq whose command finished in this file; on start, run for every change since (or once as a reset when they are gone).",
            environment: "COUNTRIES_CURSOR")
        let heartbeat = CommonOptions.heartbeat
        let connection: ConnectionOptions

        /// The options of the subcommand called `name`.
        init(name: String) { connection = .subscriber(name) }
    }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        guard let executable = command.trailing.first else {
            throw command.usageError(
                "Missing the command to run after '--', e.g. countries on-change -- ./notify.sh")
        }
        let arguments = Array(command.trailing.dropFirst())
        let cursor = command[\.cursor].map(CursorFile.init(path:))
        var start: EventFeed.Start = command[\.initial] ? .snapshot : .now
        do {
            if let saved = try cursor?.read() { start = .after(saved) }
        } catch {
            throw CommandError.unreadableCursor(error)
        }
        let runner = EventCommandRunner(executable: executable, arguments: arguments) { Output.error($0) }
        try runner.checkRunnable()
        let setup = try SubscriberSetup(command)
        var feed = EventFeed(start: start)
        var saved: EventFeed.Position?
        if case .after(let position) = start { saved = position }

        func save(_ position: EventFeed.Position?) throws {
            guard let cursor, let position, position != saved else { return }
            do {
                try cursor.write(position)
            } catch {
                throw CommandError.unwritableCursor(error)
            }
            saved = position
        }

        try setup.follow { update, following in
            let deliveries = try feed.deliveries(
                for: update.notifications, replica: update.replica, store: update.store,
                history: following.history)
            for delivery in deliveries {
                switch delivery {
                case .event(let event):
                    let ending = runner.run(event: event, takeStopSignals: following.takeStopSignals)
                    guard ending.finished else { return false }
                    try save(
                        .init(store: event.store ?? saved?.store ?? update.store, seq: event.seq))
                    if ending.stopRequested { return false }
                case .restart(let state, let reason):
                    if reason != .initial {
                        Output.error(
                            "on-change: \(reason.describe(now: state.seq)); running once for the whole list as a reset"
                        )
                    }
                    let ending = runner.run(reset: state, takeStopSignals: following.takeStopSignals)
                    guard ending.finished else { return false }
                    try save(.init(store: update.store, seq: state.seq))
                    if ending.stopRequested { return false }
                }
            }
            // A snapshot with nothing to run still moves the cursor: a restart goes on from here.
            try save(feed.position)
            return true
        }
        return ExitCode.success
    }
}
