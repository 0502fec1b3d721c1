import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesTerminal
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

    init<Options: SubscriberOptions>(_ command: ParsedValues<Options>) throws {
        options = try ClientOptions(command)
        let heartbeat = command[\.heartbeat]
        context = try Context()
        do {
            subscription = try LiveSubscription(
                context: context,
                endpoints: .init(
                    command: options.commandEndpoint, events: options.eventsEndpoint),
                heartbeatInterval: heartbeat, requestTimeout: options.timeout,
                security: options.security, eventsSecurity: options.eventsSecurity)
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.usage)
        }
    }
}

/// `countries watch`: the data source. A live table on a terminal; otherwise the whole table
/// (or, with `--json`, the whole list as one JSON line) after every applied event.
struct WatchCommand {
    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let setup = try SubscriberSetup(command)
        let environment = ProcessInfo.processInfo.environment
        let terminal = Terminal()
        if !command[\.json] && terminal.outputIsTerminal && terminal.inputIsTerminal {
            let capabilities = TerminalCapabilities(environment: environment, outputIsTerminal: true)
            try TableScreen(
                mode: .watch, subscription: setup.subscription, toggles: nil, terminal: terminal,
                capabilities: capabilities
            ).run()
            return ExitCode.success
        }
        let glyphs = TerminalCapabilities(environment: environment, outputIsTerminal: false).glyphs
        let asJSON = command[\.json]
        try StateStream(subscription: setup.subscription).run { state, _ in
            if asJSON {
                var snapshot = Reply(seq: state.seq, countries: state.rows)
                snapshot.store = setup.subscription.store
                var line = String(decoding: snapshot.encoded(), as: UTF8.self)
                // The list, not a reply: `{"countries": [...], "seq": S, "store": ID}`.
                line = line.replacingOccurrences(of: "\"ok\":true,", with: "")
                Output.line(line)
            } else {
                Output.line("seq \(state.seq)\(glyphs.separator)\(FooterModel.summary(of: state))")
                for line in TableText.lines(state, glyphs: glyphs) { Output.line(line) }
                Output.line("")
            }
        }
        return ExitCode.success
    }
}

/// `countries select`: the interactive delegate: a cursor over the live table; Space or Enter
/// toggles the country under it.
struct SelectCommand {
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
            context: setup.context, endpoint: setup.options.commandEndpoint, timeout: setup.options.timeout,
            tries: setup.options.tries, security: setup.options.security)
        let capabilities = TerminalCapabilities(
            environment: ProcessInfo.processInfo.environment, outputIsTerminal: true)
        try TableScreen(
            mode: .select, subscription: setup.subscription, toggles: toggles, terminal: terminal,
            capabilities: capabilities
        ).run()
        return ExitCode.success
    }
}

/// Follows a subscription without a terminal and hands each state to `body`, in seq order:
/// first the snapshot, then the state after every event (replayed one by one, so no
/// intermediate state is skipped), then a fresh snapshot after a resync.
struct StateStream {
    let subscription: LiveSubscription

    /// What the state just became.
    enum Cause {
        case snapshot
        case event(Event)
    }

    func run(_ body: (CountriesState, Cause) throws -> Void) throws {
        var copy: CountriesState?
        try pump { notifications in
            for notification in notifications {
                switch notification {
                case .replaced:
                    copy = subscription.replica
                    if let copy { try body(copy, .snapshot) }
                case .applied(let event):
                    // A snapshot taken together with its buffered events already holds them.
                    if let copy, event.seq <= copy.seq { continue }
                    guard var state = copy, (try? state.replay(event)) != nil else {
                        copy = subscription.replica
                        if let copy { try body(copy, .snapshot) }
                        continue
                    }
                    copy = state
                    try body(state, .event(event))
                case .phaseChanged:
                    break
                }
            }
            return true
        }
    }

    /// Polls the subscription until SIGINT or SIGTERM, or until `handle` returns false; says on
    /// stderr when the view goes stale and live again.
    func pump(_ handle: ([SubscriptionMachine.Notification]) throws -> Bool) throws {
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM])
        var lastPhase = subscription.phase
        var now = ContinuousClock.now

        func deliver(_ notifications: [SubscriptionMachine.Notification]) throws -> Bool {
            // What the notifications made the consumer say comes before the phase they end in.
            let goOn = try handle(notifications)
            for case .phaseChanged(let phase) in notifications where phase != lastPhase {
                lastPhase = phase
                switch phase {
                case .stale(let reason): Output.error("stale: \(reason); catching up")
                case .live: Output.error("live at seq \(subscription.replica?.seq ?? 0)")
                case .connecting: break
                }
            }
            return goOn
        }

        guard try deliver(subscription.start(now: now)) else { return }
        while true {
            var poller = Poller()
            let registration = subscription.register(in: &poller)
            let signalIndex = poller.add(fileDescriptor: signals.fileDescriptor)
            now = ContinuousClock.now
            let deadline = subscription.nextDeadline ?? now + .seconds(1)
            let timeout = max(0, Int((deadline - now) / .milliseconds(1)) + 1)
            let ready = try poller.poll(timeoutMilliseconds: timeout)
            if ready.isReadable(signalIndex), !signals.drain().isEmpty { return }
            now = ContinuousClock.now
            guard try deliver(subscription.process(ready, registration, now: now)) else { return }
            guard try deliver(subscription.tick(now: now)) else { return }
        }
    }
}

/// The history fetch an ``EventFeed`` catches up with: pages of `history` through a command
/// client; nil when the service no longer keeps them.
struct HistoryFetcher {
    let client: CommandClient

    func page(after since: UInt64) throws -> EventFeed.HistoryPage? {
        let reply: Reply
        do {
            reply = try client.send(.history(since: since))
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.unavailable)
        }
        guard reply.ok, let events = reply.events else {
            if reply.failure?.code == .historyTruncated { return nil }
            throw CommandFailure(
                message: reply.failure?.message ?? "history was refused", exitCode: ExitCode.refused)
        }
        return (events, reply.store, reply.more ?? false)
    }

    /// What a restart means, for stderr.
    static func describe(_ reason: EventFeed.RestartReason, now seq: UInt64) -> String {
        switch reason {
        case .initial:
            return "the list at seq \(seq)"
        case .storeChanged(let from, let to):
            return
                "the service now runs on another store (\(to), was \(from)); its seqs mean other changes, so going on from its seq \(seq)"
        case .historyGone(let after, let upTo):
            return after < upTo
                ? "events \(after + 1) to \(upTo) are no longer kept by the service; going on from seq \(seq)"
                : "the service is at seq \(upTo), behind \(after) (a new store?); going on from seq \(seq)"
        }
    }
}
