import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesOptions
import CountriesTerminal
import CountriesViews
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// What `watch`, `select` and `on-change` share: a subscription built from the options.
///
/// The context is not terminated by hand: `zmq_ctx_term` blocks until every socket is closed,
/// and the subscription's sockets live as long as the setup does. Each socket keeps the context
/// alive, so the context terminates by itself once the last of them is released.
struct SubscriberSetup {
    let context: Context
    let subscription: LiveSubscription
    let options: ClientOptions
    /// The service's heartbeat period (`--heartbeat-ms`).
    let heartbeat: Duration

    /// With `keepsStates`, each update carries the state after every change (piped `watch`).
    init<Options: SubscriberOptions>(_ command: ParsedValues<Options>, keepsStates: Bool = false) throws {
        options = try ClientOptions(command)
        heartbeat = command[\.heartbeat]
        context = try Context()
        do {
            subscription = try LiveSubscription(
                context: context,
                endpoints: .init(commands: options.commandEndpoints, events: options.eventsEndpoints),
                heartbeatInterval: heartbeat, requestTimeout: options.timeout,
                security: options.security, eventsSecurity: options.eventsSecurity, keepsStates: keepsStates)
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.usage)
        }
    }
}

/// `countries watch`: the data source. A live table on a terminal; otherwise the whole table
/// (or, with `--json`, the whole list as one JSON line) after every change.
struct WatchCommand: WatchDeclaration {
    typealias Options = WatchOptions

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
        try setup.follow { update in
            for state in update.states.prefix((limit ?? Int.max) - printed) {
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

/// `countries select`: the interactive delegate: a cursor over the live table; Space or Enter
/// toggles the country under it.
struct SelectCommand: SelectDeclaration {
    typealias Options = SelectOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let terminal = Terminal()
        guard terminal.inputIsTerminal, terminal.outputIsTerminal else {
            throw CommandFailure(
                message: "select needs a terminal for its keys and screen; use `countries toggle` in scripts",
                exitCode: ExitCode.usage)
        }
        let setup = try SubscriberSetup(command)
        let toggles = PendingRequests<IndexedCountry>(
            context: setup.context, endpoints: setup.options.commandEndpoints, timeout: setup.options.timeout,
            tries: setup.options.tries, security: setup.options.security)
        try setup.screen(.select, toggles: toggles, terminal: terminal)
        return ExitCode.success
    }
}

extension SubscriberSetup {
    /// Runs the live table on `terminal`.
    func screen(
        _ mode: TableScreenModel.Mode, toggles: PendingRequests<IndexedCountry>?, terminal: Terminal
    ) throws {
        let capabilities = TerminalCapabilities(
            environment: ProcessInfo.processInfo.environment, outputIsTerminal: true)
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP, SIGWINCH])
        let endpoints = subscription.endpoints
        let model = TableScreenModel(
            mode: mode, glyphs: capabilities.glyphs,
            endpoints:
                "commands \(endpoints.command)\(capabilities.glyphs.separator)events \(endpoints.events)",
            size: terminal.size())
        let loop = SubscriptionLoop(
            subscription: subscription, requests: toggles,
            fileDescriptors: [signals.fileDescriptor, terminal.input])
        try TableScreen(
            model: model, loop: loop, toggles: toggles, terminal: terminal, capabilities: capabilities
        ).run(signals: signals)
    }

    /// The history an ``EventFeed`` catches up with, one client for every page; a failure
    /// ends the command with its exit code.
    func history() -> (UInt64) throws -> EventFeed.HistoryPage? {
        let fetcher = HistoryFetcher(client: options.makeClient(context: context))
        return { since in
            do throws(HistoryFetcher.Failure) {
                return try fetcher.page(after: since)
            } catch {
                switch error {
                case .unreachable(let error):
                    throw CommandFailure(message: error.message, exitCode: ExitCode.unavailable)
                case .refused(let message):
                    throw CommandFailure(message: message, exitCode: ExitCode.refused)
                }
            }
        }
    }

    /// Follows the subscription without a terminal until SIGINT or SIGTERM, or until `handle`
    /// returns false; says on stderr where it waits while no list came yet or the view is stale,
    /// and when it is live again (``SubscriberNotices``).
    /// The first list may take one heartbeat period before it says so.
    func follow(_ handle: (SubscriptionLoop<Never>.Update) throws -> Bool) throws {
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM])
        var notices = SubscriberNotices(
            endpoints: subscription.endpoints, patience: heartbeat, now: ContinuousClock.now)
        try SubscriptionLoop(subscription: subscription, fileDescriptors: [signals.fileDescriptor]).run {
            happening, now in
            switch happening {
            case .readable: return signals.drain().isEmpty
            case .replies: return true
            case .tick:
                for line in notices.lines(phase: subscription.phase, seq: subscription.replica?.seq, now: now)
                {
                    Output.error(line)
                }
                return true
            case .update(let update):
                // What the notifications made the consumer say comes before the phase they end in.
                for case .rejected(_, let reason) in update.notifications {
                    Output.error("protocol violation: \(reason); dropped it, catching up from the service")
                }
                let goOn = try handle(update)
                // Each phase it went through, in order (stale and live again in one update too).
                let phases = update.notifications.compactMap { notification in
                    if case .phaseChanged(let phase) = notification { return phase }
                    return nil
                }
                for phase in phases + [update.phase] {
                    for line in notices.lines(phase: phase, seq: update.replica?.seq, now: now) {
                        Output.error(line)
                    }
                }
                return goOn
            }
        }
    }
}
