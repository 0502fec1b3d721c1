import ArgumentParsing
import CountriesClient
import CountriesCore
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// `countries on-change -- COMMAND [ARGS...]`: the side-effect delegate (the seed's
/// EmailComposer): runs COMMAND once per applied event, in seq order, never two at once.
///
/// COMMAND gets `COUNTRIES_SEQ`, `COUNTRIES_EVENT` (`changed`, `added`, `removed`, `reset`),
/// `COUNTRY_INDEX`, `COUNTRY_NAME`, `COUNTRY_VISITED` in its environment and the event's JSON on
/// its stdin. After a gap it runs for every missed event (from `history`), or once with
/// `COUNTRIES_EVENT=reset` and the whole list when the history is gone or the store changed.
/// With `--cursor FILE` the position survives restarts: the file holds the store and the last
/// seq whose command finished, and a new run starts after it.
struct OnChangeCommand {
    let command: ParsedCommand

    func run() throws -> Int32 {
        guard let executable = command.trailing.first else {
            throw command.usageError(
                "Missing the command to run after '--', e.g. countries on-change -- ./notify.sh")
        }
        let arguments = Array(command.trailing.dropFirst())
        let cursor = command.value("cursor").map(CursorFile.init(path:))
        var start: EventFeed.Start = command.flag("initial") ? .snapshot : .now
        do {
            if let saved = try cursor?.read() { start = .after(saved) }
        } catch {
            throw CommandFailure(message: error.description, exitCode: ExitCode.dataError)
        }
        let setup = try SubscriberSetup(command)
        let fetcher = HistoryFetcher(client: setup.options.makeClient(context: setup.context))
        let runner = CommandRunner(executable: executable, arguments: arguments)
        var feed = EventFeed(start: start)
        var saved: EventFeed.Position?
        if case .after(let position) = start { saved = position }

        func save(_ position: EventFeed.Position?) throws {
            guard let cursor, let position, position != saved else { return }
            do {
                try cursor.write(position)
            } catch {
                throw CommandFailure(message: error.description, exitCode: ExitCode.cantCreate)
            }
            saved = position
        }

        try setup.follow { update in
            let deliveries = try feed.deliveries(
                for: update.notifications, replica: update.replica, store: update.store,
                history: fetcher.page(after:))
            for delivery in deliveries {
                switch delivery {
                case .event(let event):
                    runner.run(event: event)
                    try save(
                        .init(store: event.store ?? saved?.store ?? update.store, seq: event.seq))
                case .restart(let state, let reason):
                    if reason != .initial {
                        Output.error(
                            "on-change: \(HistoryFetcher.describe(reason, now: state.seq)); running once for the whole list as a reset"
                        )
                    }
                    runner.run(reset: state)
                    try save(.init(store: update.store, seq: state.seq))
                }
            }
            // A snapshot with nothing to run still moves the cursor: a restart goes on from here.
            try save(feed.position)
            return true
        }
        return ExitCode.success
    }
}

/// Runs the user's command for one event, waits for it, and logs a failure without stopping.
struct CommandRunner {
    let executable: String
    let arguments: [String]

    func run(event: Event) {
        var environment = [
            "COUNTRIES_SEQ": "\(event.seq)",
            "COUNTRIES_EVENT": Self.name(of: event),
        ]
        if let row = event.country {
            environment["COUNTRY_INDEX"] = "\(row.index)"
            environment["COUNTRY_NAME"] = row.name
            environment["COUNTRY_VISITED"] = row.visited ? "true" : "false"
        }
        launch(environment: environment, input: event.encoded(), seq: event.seq)
    }

    func run(reset state: CountriesState) {
        let event = Event(seq: state.seq, kind: .reset(state.rows))
        launch(
            environment: ["COUNTRIES_SEQ": "\(state.seq)", "COUNTRIES_EVENT": "reset"],
            input: event.encoded(), seq: state.seq)
    }

    private static func name(of event: Event) -> String {
        switch event.kind {
        case .changed: return "changed"
        case .added: return "added"
        case .removed: return "removed"
        case .reset: return "reset"
        }
    }

    private func launch(environment extra: [String: String], input: Data, seq: UInt64) {
        let process = Process()
        let path = resolve(executable)
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        // Variables of an earlier event must not leak into one that has no row.
        for key in ["COUNTRY_INDEX", "COUNTRY_NAME", "COUNTRY_VISITED"] { environment[key] = nil }
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let stdin = Pipe()
        process.standardInput = stdin
        do {
            try process.run()
        } catch {
            Output.error("on-change: cannot run \(executable): \(error.localizedDescription)")
            return
        }
        var body = input
        body.append(0x0A)
        // The command may not read its stdin; a closed pipe is not our failure.
        try? stdin.fileHandleForWriting.write(contentsOf: body)
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal {
            Output.error(
                "on-change: \(executable) was killed by signal \(process.terminationStatus) (seq \(seq))")
        } else if process.terminationStatus != 0 {
            Output.error(
                "on-change: \(executable) exited with status \(process.terminationStatus) (seq \(seq))")
        }
    }

    /// A bare name is looked up on PATH, as a shell would.
    private func resolve(_ name: String) -> String {
        guard !name.contains("/") else { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return name
    }
}
