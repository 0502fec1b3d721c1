import CountriesClient
import CountriesCore
import CountriesTerminal
@preconcurrency import Glibc
import SystemSupport

/// The live table on a terminal, for `watch` and `select`: wires the subscription loop, the
/// terminal and the screen model (which holds every rule of the screen) together.
public struct TableScreen {
    /// The screen as it starts.
    public let model: TableScreenModel
    /// The subscriber's poll loop; it must watch the signal pipe and the terminal's input.
    public let loop: SubscriptionLoop<IndexedCountry>
    /// Where `select` sends its toggles; nil for `watch`.
    public let toggles: PendingRequests<IndexedCountry>?
    /// The terminal drawn on and read from.
    public let terminal: Terminal
    /// What the terminal can show (colour).
    public let capabilities: TerminalCapabilities

    /// A screen over `loop`, drawn on `terminal`.
    public init(
        model: TableScreenModel, loop: SubscriptionLoop<IndexedCountry>,
        toggles: PendingRequests<IndexedCountry>?, terminal: Terminal, capabilities: TerminalCapabilities
    ) {
        self.model = model
        self.loop = loop
        self.toggles = toggles
        self.terminal = terminal
        self.capabilities = capabilities
    }

    /// Runs until q, Ctrl-C, SIGINT, SIGTERM or end of input; the terminal is restored on
    /// every way out.
    public func run(signals: SignalPipe) throws {
        var model = model
        var keys = KeyDecoder()
        var renderer = FrameRenderer(color: capabilities.color)
        var typed = false
        try terminal.enterRawMode()
        defer { terminal.restore() }
        try terminal.enterFullScreen()

        func perform(_ output: TableScreenModel.Output, now: ContinuousClock.Instant) -> Bool {
            for effect in output.effects {
                switch effect {
                case .quit:
                    return false
                case .toggle(let country):
                    // A fresh id per selection: the retries of this one toggle cannot apply twice.
                    // Pinned to the store the table shows: a replica of another store refuses it.
                    let request = Request(
                        id: RequestID.make(), command: .change(.toggle(.name(country.name))),
                        ifStore: loop.subscription.store)
                    for outcome in toggles?.send(request, tag: country, now: now) ?? [] {
                        guard perform(model.handle(input(outcome), now: now), now: now) else { return false }
                    }
                }
            }
            if let frame = output.frame {
                let bytes = renderer.render(frame)
                if !bytes.isEmpty { try? terminal.write(bytes) }
            }
            return true
        }

        func input(_ outcome: PendingRequests<IndexedCountry>.Outcome) -> TableScreenModel.Input {
            switch outcome {
            case .replied(_, let reply): return .toggleReplied(reply)
            case .failed(let country, let error):
                return .toggleFailed(
                    country, message: error.message, outcomeUnknown: error.code == .outcomeUnknown,
                    cause: error.cause)
            }
        }

        _ = perform(model.handle(.resize(terminal.size()), now: .now), now: .now)
        func deadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
            // A lone ESC: nothing followed it within 50 ms, so it is the key itself.
            [model.nextDeadline(now: now), keys.hasPending ? now + .milliseconds(50) : nil].compactMap { $0 }
                .min()
        }
        try loop.run(deadline: deadline(now:)) { happening, now in
            switch happening {
            case .readable(signals.fileDescriptor):
                for signal in signals.drain() {
                    guard signal == SIGWINCH else { return false }
                    renderer.invalidate()
                    guard perform(model.handle(.resize(terminal.size()), now: now), now: now) else {
                        return false
                    }
                }
                return true
            case .readable:
                let bytes = try terminal.read()
                if bytes.isEmpty { return false }  // end of input
                typed = true
                return perform(model.handle(.keys(keys.decode(bytes)), now: now), now: now)
            case .replies(let outcomes):
                for outcome in outcomes {
                    guard perform(model.handle(input(outcome), now: now), now: now) else { return false }
                }
                return true
            case .update(let update):
                return perform(
                    model.handle(
                        .update(replica: update.replica, phase: update.phase, applied: update.applied),
                        now: now),
                    now: now)
            case .tick:
                defer { typed = false }
                if !typed, keys.hasPending, !perform(model.handle(.keys(keys.flush()), now: now), now: now) {
                    return false
                }
                return perform(model.handle(.tick, now: now), now: now)
            }
        }
    }
}
