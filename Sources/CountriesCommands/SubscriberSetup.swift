import ArgumentParsing
import CountriesClient
import CountriesCore
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
            throw CommandError.unusableSubscription(error)
        }
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

    /// The history an ``EventFeed`` catches up with: a page after a seq, or nil when the service
    /// no longer keeps it.
    typealias History = (UInt64) throws -> EventFeed.HistoryPage?

    /// What a follower's handler gets besides the update.
    struct Following {
        /// The pages of history to catch up from.
        let history: History
        /// Whether SIGINT or SIGTERM is waiting: a handler with much to write (a piped `watch`
        /// prints the list after each change of an update) looks between its parts, so that a
        /// stop does not wait for the whole update.
        let stopRequested: () -> Bool
        /// How many SIGINT or SIGTERM came since last asked, taken: a handler that waits long
        /// (on-change's command) answers each itself, and then returns false to stop.
        let takeStopSignals: () -> Int
    }

    /// Follows the subscription without a terminal until SIGINT or SIGTERM, or until `handle`
    /// returns false; says on stderr where it waits while no list came yet or the view is stale,
    /// and when it is live again (``SubscriberNotices``).
    /// The first list may take one heartbeat period before it says so.
    ///
    /// `handle` also gets the ``History`` to catch up from (in ``Following``): while the service
    /// cannot answer it (no reply, `unavailable`, over its reply budget) it is asked again, said
    /// once on stderr, until it answers or a signal stops the command; a refusal of the request
    /// itself (``HistoryFetcher/Failure``) ends the command with its exit code.
    func follow(_ handle: (SubscriptionLoop<Never>.Update, Following) throws -> Bool) throws {
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM])
        var notices = SubscriberNotices(
            endpoints: subscription.endpoints, patience: heartbeat, now: ContinuousClock.now)
        let following = Following(
            history: history(stoppedBy: signals), stopRequested: { signals.arrives(within: .zero) },
            takeStopSignals: { signals.drain().count })
        do {
            try follow(signals: signals, notices: &notices) { try handle($0, following) }
        } catch let failure as HistoryFetcher.Failure where failure.passes && signals.arrives(within: .zero) {
            // Told to stop while it waited for the service's history: a stop like any other.
            return
        }
    }

    /// Pages of history that wait out a service that cannot answer yet, until `signals` has one.
    private func history(stoppedBy signals: SignalPipe) -> History {
        let client = options.makeClient(context: context)
        // A stop ends the wait for a page at once, not after every try's timeout.
        client.stopWhenReadable = signals.fileDescriptor
        let fetcher = HistoryFetcher(client: client)
        return { since in
            // Said once per kind of failure: a too_large refusal names a byte count that changes.
            var said: String?
            let page = try fetcher.page(after: since) { delay, failure in
                if said != failure.kind {
                    Output.error(
                        "history after seq \(since) did not come: \(failure.message); asking again until it does"
                    )
                }
                said = failure.kind
                return !signals.arrives(within: delay)
            }
            if said != nil { Output.error("history after seq \(since) came through; going on") }
            return page
        }
    }

    private func follow(
        signals: SignalPipe, notices: inout SubscriberNotices,
        _ handle: (SubscriptionLoop<Never>.Update) throws -> Bool
    ) throws {
        try SubscriptionLoop(subscription: subscription, fileDescriptors: [signals.fileDescriptor]).run {
            happening, now in
            switch happening {
            case .readable: return signals.drain().isEmpty
            case .replies: return true
            case .tick:
                for line in notices.lines(
                    phase: subscription.phase, seq: subscription.replica?.seq, now: now,
                    droppedEvents: subscription.droppedEvents)
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
                    for line in notices.lines(
                        phase: phase, seq: update.replica?.seq, now: now,
                        droppedEvents: subscription.droppedEvents)
                    {
                        Output.error(line)
                    }
                }
                return goOn
            }
        }
    }
}
