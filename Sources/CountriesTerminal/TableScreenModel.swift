import CountriesCore

/// Everything the live table of `watch` and `select` knows, as a pure value: inputs and the
/// instant they happened in, a frame (when one is due) and effects out. It never reads a clock
/// and owns no terminal or socket; the loop that drives it turns key bytes into ``Key``s, the
/// subscription into ``Input/update(replica:phase:applied:)``, draws the frames and performs the
/// effects.
///
/// What it holds: the replica shown, the subscription's phase (and since when it has been
/// stale), the last event and the row highlighted after it, the status line of `select`, the
/// cursor (`select`), the scroll offset, and whether `watch` follows changes.
///
/// Scrolling `watch` by hand: Up/Down (`k`/`j`), Page Up/Page Down, Home/`g` and End/`G` move
/// the view and stop it following changes (the title says so); `f`, or scrolling back to the
/// end of the list, makes it follow them again.
public struct TableScreenModel: Sendable {
    /// The instants the model is told; it never reads them itself.
    public typealias Instant = ContinuousClock.Instant

    /// Which screen this is.
    public enum Mode: Equatable, Sendable {
        /// The live table: no cursor; it scrolls by hand.
        case watch
        /// The live table with a cursor; Space and Enter toggle.
        case select
    }

    /// What happened.
    public enum Input: Equatable, Sendable {
        /// Keys the person pressed, in order.
        case keys([Key])
        /// The subscription changed: the replica and phase after the change, and the events it
        /// applied (empty for a snapshot or a phase change).
        case update(replica: CountriesState?, phase: SubscriptionPhase, applied: [Event])
        /// The terminal has a new size.
        case resize(ViewportSize)
        /// Time passed (a highlight may end, a clock in the footer may age, a frame may be due).
        case tick
        /// The service answered a toggle.
        case toggleReplied(Reply)
        /// A toggle got no answer. With `outcomeUnknown` it may have been applied (no try brought
        /// its own reply): the status says so rather than "was not toggled", and `cause`.
        case toggleFailed(IndexedCountry, message: String, outcomeUnknown: Bool = false, cause: String? = nil)
    }

    /// What the driver must do.
    public enum Effect: Equatable, Sendable {
        /// Send `toggle` for this country (with a fresh request id).
        case toggle(IndexedCountry)
        /// Leave.
        case quit
    }

    /// What one input produced.
    public struct Output: Equatable, Sendable {
        /// The screen to draw, when one is due.
        public var frame: Frame?
        /// What to do, in order.
        public var effects: [Effect]
    }

    /// The status line of `select`.
    public struct Status: Equatable, Sendable {
        /// What it says.
        public var text: String
        /// Whether it reports a failure (drawn as an alert).
        public var isError: Bool
    }

    /// How long a changed row stays highlighted.
    public static let highlightTime: Duration = .milliseconds(1500)

    /// Which screen this is.
    public let mode: Mode
    /// The glyph set the screen draws with.
    public let glyphs: Glyphs
    /// The header's second line (the endpoints).
    public let endpoints: String
    /// The terminal size the frames are laid out for.
    public private(set) var size: ViewportSize
    /// The replica shown; nil before the first snapshot.
    public private(set) var replica: CountriesState?
    /// The subscription's phase, as last reported.
    public private(set) var phase: SubscriptionPhase = .connecting
    /// Whether `watch` scrolls to each change (false once the person scrolled by hand).
    public private(set) var isFollowing = true
    /// The first row shown.
    public private(set) var scrollOffset = 0
    /// The status line, if any.
    public private(set) var status: Status?

    private var delegate = SelectionDelegate()
    private var coalescer = FrameCoalescer<Instant>()
    private var lastEvent: (event: Event, at: Instant)?
    private var highlight: (index: Int, until: Instant)?
    private var staleSince: Instant?
    /// The country of the last toggle whose outcome is unknown, while the status says so: the
    /// next event about its row replaces that status with what the row now is.
    private var unsettledToggle: String?

    /// Creates the model of an empty (connecting) screen.
    public init(mode: Mode, glyphs: Glyphs, endpoints: String, size: ViewportSize) {
        self.mode = mode
        self.glyphs = glyphs
        self.endpoints = endpoints
        self.size = size
    }

    /// The row under the cursor (`select`).
    public var cursor: Int { delegate.cursor }

    /// The row highlighted after a change, if any.
    public var highlighted: Int? { highlight?.index }

    /// Acts on `input`, which happened at `now`; returns the frame when one is due and what to do.
    public mutating func handle(_ input: Input, now: Instant) -> Output {
        var effects: [Effect] = []
        switch input {
        case .keys(let keys):
            for key in keys {
                effects += press(key, now: now)
                if effects.contains(.quit) { return Output(frame: nil, effects: effects) }
            }
        case .update(let replica, let phase, let applied):
            apply(replica: replica, phase: phase, applied: applied, now: now)
        case .resize(let size):
            self.size = size
            coalescer.markDirty(now: now)
        case .tick:
            break
        case .toggleReplied(let reply):
            let described = SelectionStatus.describe(reply: reply)
            show(Status(text: described.text, isError: described.isError), now: now)
        case .toggleFailed(let country, let message, let outcomeUnknown, let cause):
            let text = SelectionStatus.describe(
                failedToggleOf: country.name, message: message, outcomeUnknown: outcomeUnknown, cause: cause)
            show(Status(text: text, isError: true), now: now)
            unsettledToggle = outcomeUnknown ? country.name : nil
        }
        if let highlight, now >= highlight.until {
            self.highlight = nil
            coalescer.markDirty(now: now)
        }
        // The footer's "N s ago" ages by itself; redraw once a second so it stays true.
        if showsClock, coalescer.lastDraw.map({ now - $0 >= .seconds(1) }) ?? true {
            coalescer.markDirty(now: now)
        }
        guard coalescer.drawIfDue(now: now) else { return Output(frame: nil, effects: effects) }
        return Output(frame: layout(now: now).frame, effects: effects)
    }

    /// When the model next needs a ``Input/tick`` (a frame due, a highlight ending, a clock
    /// to age); nil when nothing will change by itself.
    public func nextDeadline(now: Instant) -> Instant? {
        var deadlines: [Instant] = []
        if let deadline = coalescer.deadline(now: now) { deadlines.append(deadline) }
        if let highlight { deadlines.append(highlight.until) }
        if showsClock { deadlines.append((coalescer.lastDraw ?? now) + .seconds(1)) }
        return deadlines.min()
    }

    private var showsClock: Bool { lastEvent != nil || staleSince != nil }

    private mutating func show(_ status: Status, now: Instant) {
        self.status = status
        unsettledToggle = nil
        coalescer.markDirty(now: now)
    }

    private mutating func apply(
        replica new: CountriesState?, phase: SubscriptionPhase, applied: [Event], now: Instant
    ) {
        for event in applied {
            lastEvent = (event, now)
            if let name = unsettledToggle, let settled = SelectionStatus.describe(settling: name, by: event) {
                show(Status(text: settled, isError: false), now: now)
            }
            if let row = event.country, event.topic != .countryRemoved {
                highlight = (row.index, now + Self.highlightTime)
            } else {
                highlight = nil
            }
        }
        if case .stale = phase {
            if staleSince == nil { staleSince = now }
        } else {
            staleSince = nil
        }
        if mode == .select, let old = replica, let new, old != new {
            delegate.rowsMoved(from: old, to: new)
        }
        replica = new
        self.phase = phase
        coalescer.markDirty(now: now)
    }

    private mutating func press(_ key: Key, now: Instant) -> [Effect] {
        switch mode {
        case .watch: return scroll(key, now: now)
        case .select: return select(key, now: now)
        }
    }

    /// `select`: the delegate moves the cursor or asks for a toggle.
    private mutating func select(_ key: Key, now: Instant) -> [Effect] {
        let layout = layout(now: now)
        switch delegate.handle(key, in: dataSource(phase: shownPhase(now: now)), pageSize: layout.bodyHeight)
        {
        case .quit?:
            return [.quit]
        case .moveCursor?:
            coalescer.markDirty(now: now)
            return []
        case .toggle(let country)?:
            show(Status(text: "Toggling \(country.name)\(glyphs.ellipsis)", isError: false), now: now)
            return [.toggle(country)]
        case nil:
            return []
        }
    }

    /// `watch`: moves the view; at the end of the list, or on `f`, it follows changes again.
    private mutating func scroll(_ key: Key, now: Instant) -> [Effect] {
        let layout = layout(now: now)
        let page = max(1, layout.bodyHeight)
        let rows = dataSource(phase: shownPhase(now: now)).numberOfRows
        let last = max(0, rows - layout.bodyHeight)
        let target: Int
        switch key {
        case .char("q"), .char("Q"), .ctrlC, .escape: return [.quit]
        case .char("f"), .char("F"):
            isFollowing = true
            coalescer.markDirty(now: now)
            return []
        case .up, .char("k"): target = scrollOffset - 1
        case .down, .char("j"): target = scrollOffset + 1
        case .pageUp: target = scrollOffset - page
        case .pageDown: target = scrollOffset + page
        case .home, .char("g"): target = 0
        case .end, .char("G"): target = last
        default: return []
        }
        scrollOffset = min(max(0, target), last)
        isFollowing = scrollOffset >= last
        coalescer.markDirty(now: now)
        return []
    }

    /// The layout of the screen at `now`; keeps the offset it settled on.
    private mutating func layout(now: Instant) -> TableView.Layout {
        let phase = shownPhase(now: now)
        let source = dataSource(phase: phase)
        // Clamp first: rows may have gone since the last key, and the layout scrolls to the cursor.
        if mode == .select { delegate.clamp(rowCount: source.numberOfRows) }
        let view = TableView(
            header: HeaderModel(
                title: title, endpoints: endpoints, phase: phase, seq: replica?.seq ?? 0, glyphs: glyphs),
            footer: FooterModel(
                summary: phase == .live ? FooterModel.summary(of: replica) : "",
                lastChange: phase == .live
                    ? lastEvent.map { LastChange.describe($0.event, age: now - $0.at, glyphs: glyphs) } : nil,
                status: status?.text, statusIsError: status?.isError ?? false),
            cursor: mode == .select ? delegate.cursor : nil,
            highlighted: phase == .live ? highlight?.index : nil,
            scrollOffset: scrollOffset, scrollsToHighlight: isFollowing, ellipsis: glyphs.ellipsis)
        let layout = view.layout(source, in: size)
        scrollOffset = layout.scrollOffset
        return layout
    }

    private var title: String {
        switch mode {
        case .watch:
            return isFollowing ? "countries watch" : "countries watch  (scrolled; f follows changes)"
        case .select:
            let arrows = glyphs == .unicode ? "↑/↓" : "up/down"
            return
                "countries select  (\(arrows) move\(glyphs.separator)space toggles\(glyphs.separator)q quits)"
        }
    }

    /// The phase as shown at `now`: a stale one also says how long ago it turned stale.
    private func shownPhase(now: Instant) -> SubscriptionPhase {
        switch phase {
        case .connecting, .live: return phase
        case .stale(let reason):
            // The reason names the detection window ("no heartbeat for 3 s"); how long the view
            // has been stale is what a person wants to know after that.
            guard let staleSince else { return phase }
            let seconds = Int((now - staleSince) / .seconds(1))
            return .stale(seconds > 0 ? "\(reason) (\(seconds) s ago)" : reason)
        }
    }

    private func dataSource(phase: SubscriptionPhase) -> any TableDataSource {
        // As many placeholder rows as the list had, so the layout does not jump when it swaps.
        let rows = min(max(replica?.count ?? 12, 1), 40)
        return phase.dataSource(state: replica, skeletonRows: rows, glyphs: glyphs)
    }
}
