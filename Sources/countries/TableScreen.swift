import CountriesClient
import CountriesCore
import CountriesTerminal
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// The live table on a terminal, for `watch` (no cursor) and `select` (a cursor, and toggles).
///
/// This is the seed's view controller: it owns nothing of its own but wires the subscription
/// (the data), the data sources (live or skeleton), the selection delegate and the renderer,
/// and runs one poll loop over the SUB socket, the request sockets, stdin and a signal pipe.
final class TableScreen {
    /// Which screen this is.
    enum Mode {
        case watch
        case select
    }

    private let mode: Mode
    private let subscription: LiveSubscription
    private let toggles: PendingRequests<IndexedCountry>?
    private let terminal: Terminal
    private let capabilities: TerminalCapabilities
    private let endpointsText: String

    private var delegate = SelectionDelegate()
    private var renderer: FrameRenderer
    private var coalescer = FrameCoalescer<ContinuousClock.Instant>()
    private var keys = KeyDecoder()
    private var scrollOffset = 0
    private var pageSize = 10
    private var lastEvent: (event: Event, at: ContinuousClock.Instant)?
    private var highlight: (index: Int, until: ContinuousClock.Instant)?
    private var status: (text: String, isError: Bool)?
    private var shownState: CountriesState?
    private var staleSince: ContinuousClock.Instant?

    private static let highlightTime: Duration = .milliseconds(1500)

    init(
        mode: Mode, subscription: LiveSubscription, toggles: PendingRequests<IndexedCountry>?,
        terminal: Terminal,
        capabilities: TerminalCapabilities
    ) {
        self.mode = mode
        self.subscription = subscription
        self.toggles = toggles
        self.terminal = terminal
        self.capabilities = capabilities
        self.renderer = FrameRenderer(color: capabilities.color)
        let separator = capabilities.glyphs.separator
        endpointsText =
            "commands \(subscription.endpoints.command)\(separator)events \(subscription.endpoints.events)"
    }

    /// Runs until q, Ctrl-C, SIGINT, SIGTERM or end of input; the terminal is restored on
    /// every way out.
    func run() throws {
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP, SIGWINCH])
        try terminal.enterRawMode()
        defer { terminal.restore() }
        try terminal.enterFullScreen()

        var now = ContinuousClock.now
        apply(subscription.start(now: now), now: now)
        draw(now: now)

        loop: while true {
            var poller = Poller()
            let registration = subscription.register(in: &poller)
            let toggleIndex = toggles?.register(in: &poller)
            let inputIndex = poller.add(fileDescriptor: terminal.input)
            let signalIndex = poller.add(fileDescriptor: signals.fileDescriptor)

            now = ContinuousClock.now
            let ready = try poller.poll(timeoutMilliseconds: timeout(now: now))
            now = ContinuousClock.now

            if ready.isReadable(signalIndex) {
                for signal in signals.drain() {
                    if signal == SIGWINCH {
                        renderer.invalidate()
                        markDirty(now: now)
                    } else {
                        break loop
                    }
                }
            }
            if ready.isReadable(inputIndex) {
                let bytes = try terminal.read()
                if bytes.isEmpty { break loop }  // end of input
                if handle(keys.decode(bytes), now: now) { break loop }
            } else if keys.hasPending {
                // A lone ESC: nothing followed it within the poll timeout, so it is the key itself.
                if handle(keys.flush(), now: now) { break loop }
            }
            if let toggles, let toggleIndex, ready.isReadable(toggleIndex) {
                report(toggles.receive(now: now))
            }
            apply(subscription.process(ready, registration, now: now), now: now)
            apply(subscription.tick(now: now), now: now)
            if let toggles { report(toggles.tick(now: now)) }
            if let highlight, now >= highlight.until {
                self.highlight = nil
                markDirty(now: now)
            }
            draw(now: now)
        }
    }

    /// The poll timeout: the soonest of the subscription's timers, the next frame, the end of
    /// the highlight, a lone ESC, and the footer's "N s ago" clock.
    private func timeout(now: ContinuousClock.Instant) -> Int {
        var deadlines: [ContinuousClock.Instant] = [now + .seconds(1)]
        if let deadline = subscription.nextDeadline { deadlines.append(deadline) }
        if let deadline = toggles?.nextDeadline { deadlines.append(deadline) }
        if let deadline = coalescer.deadline(now: now) { deadlines.append(deadline) }
        if let highlight { deadlines.append(highlight.until) }
        if keys.hasPending { deadlines.append(now + .milliseconds(50)) }
        let soonest = deadlines.min() ?? now
        return max(0, Int((soonest - now) / .milliseconds(1)) + 1)
    }

    /// Acts on keys; true when the person asked to leave.
    private func handle(_ keys: [Key], now: ContinuousClock.Instant) -> Bool {
        for key in keys {
            if mode == .watch {
                switch key {
                case .char("q"), .char("Q"), .ctrlC, .escape: return true
                default: continue
                }
            }
            let source = dataSource()
            switch delegate.handle(key, in: source, pageSize: pageSize) {
            case .quit?:
                return true
            case .moveCursor?:
                markDirty(now: now)
            case .toggle(let country)?:
                status = ("Toggling \(country.name)\(capabilities.glyphs.ellipsis)", false)
                // A fresh id per selection: the retries of this one toggle cannot apply twice.
                let request = Request(id: RequestID.make(), command: .change(.toggle(.name(country.name))))
                if let toggles { report(toggles.send(request, tag: country, now: now)) }
                markDirty(now: now)
            case nil:
                continue
            }
        }
        return false
    }

    private func report(_ outcomes: [PendingRequests<IndexedCountry>.Outcome]) {
        for outcome in outcomes {
            switch outcome {
            case .replied(_, let reply):
                status = SelectionStatus.describe(reply: reply)
            case .failed(let country, let error):
                status = ("\(country.name) was not toggled: \(error.message)", true)
            }
            markDirty(now: .now)
        }
    }

    private func apply(_ notifications: [SubscriptionMachine.Notification], now: ContinuousClock.Instant) {
        guard !notifications.isEmpty else { return }
        for notification in notifications {
            if case .applied(let event) = notification {
                lastEvent = (event, now)
                if let row = event.country, event.topic != .countryRemoved {
                    highlight = (row.index, now + Self.highlightTime)
                } else {
                    highlight = nil
                }
            }
        }
        if case .stale = subscription.phase {
            if staleSince == nil { staleSince = now }
        } else {
            staleSince = nil
        }
        if mode == .select, let old = shownState, let new = subscription.replica, old != new {
            delegate.rowsMoved(from: old, to: new)
        }
        shownState = subscription.replica
        markDirty(now: now)
    }

    private func markDirty(now: ContinuousClock.Instant) {
        _ = coalescer.markDirty(now: now)
    }

    private var viewPhase: ViewPhase {
        switch subscription.phase {
        case .connecting: return .connecting
        case .live: return .live(seq: subscription.replica?.seq ?? 0)
        case .stale(let reason):
            // The reason names the detection window ("no heartbeat for 3 s"); how long the view
            // has been stale is what a person wants to know after that.
            guard let staleSince else { return .stale(reason: reason) }
            let seconds = Int((ContinuousClock.now - staleSince) / .seconds(1))
            return .stale(reason: seconds > 0 ? "\(reason) (\(seconds) s ago)" : reason)
        }
    }

    private func dataSource() -> any TableDataSource {
        // As many placeholder rows as the list had, so the layout does not jump when it swaps.
        let rows = min(max(subscription.replica?.count ?? 12, 1), 40)
        return viewPhase.dataSource(
            state: subscription.replica, skeletonRows: rows, glyphs: capabilities.glyphs)
    }

    private func draw(now: ContinuousClock.Instant) {
        // The footer's "N s ago" ages by itself; redraw once a second so it stays true.
        if lastEvent != nil || staleSince != nil, coalescer.lastDraw.map({ now - $0 >= .seconds(1) }) ?? true
        {
            markDirty(now: now)
        }
        guard coalescer.drawIfDue(now: now) else { return }
        let glyphs = capabilities.glyphs
        let phase = viewPhase
        let title =
            mode == .watch ? "countries watch" : "countries select  (↑/↓ move · space toggles · q quits)"
        let source = dataSource()
        // Clamp first: rows may have gone since the last key, and the layout scrolls to the cursor.
        if mode == .select { delegate.clamp(rowCount: source.numberOfRows) }
        let view = TableView(
            header: HeaderModel(
                title: glyphs == .unicode ? title : title.replacingOccurrences(of: "↑/↓", with: "up/down"),
                endpoints: endpointsText, phase: phase, glyphs: glyphs),
            footer: FooterModel(
                summary: phase.isLive ? FooterModel.summary(of: subscription.replica) : "",
                lastChange: phase.isLive
                    ? lastEvent.map { LastChange.describe($0.event, age: now - $0.at, glyphs: glyphs) } : nil,
                status: status?.text, statusIsError: status?.isError ?? false),
            cursor: mode == .select ? delegate.cursor : nil,
            highlighted: phase.isLive ? highlight?.index : nil,
            scrollOffset: scrollOffset)
        let layout = view.layout(source, in: terminal.size())
        scrollOffset = layout.scrollOffset
        pageSize = max(1, layout.bodyHeight)
        let bytes = renderer.render(layout.frame)
        if !bytes.isEmpty { try? terminal.write(bytes) }
    }
}

@available(*, unavailable) extension TableScreen: Sendable {}
