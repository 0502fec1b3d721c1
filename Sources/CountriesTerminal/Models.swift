import CountriesCore

/// Where a view stands with the service, which decides its data source and its header.
public enum ViewPhase: Equatable, Sendable {
    /// No snapshot yet.
    case connecting
    /// In sync with the service at `seq`.
    case live(seq: UInt64)
    /// Out of sync: a gap in seq, or no heartbeat. `reason` reads after `stale: `.
    case stale(reason: String)

    /// The stale phase for a silent service: `stale: no heartbeat for 3 s`.
    public static func noHeartbeat(seconds: Int) -> ViewPhase {
        .stale(reason: "no heartbeat for \(seconds) s")
    }

    /// Whether the rows shown are live.
    public var isLive: Bool {
        if case .live = self { return true }
        return false
    }

    /// The header's phase text: `live · seq 12`, `stale: no heartbeat for 3 s`, `connecting…`.
    public func text(_ glyphs: Glyphs = .unicode) -> String {
        switch self {
        case .connecting: return "connecting" + glyphs.ellipsis
        case .live(let seq): return "live\(glyphs.separator)seq \(seq)"
        case .stale(let reason): return "stale: \(reason)"
        }
    }

    /// The data source for this phase: live rows only when live and a state is at hand, else a
    /// skeleton of `skeletonRows` rows (seed 002: never old data posing as live).
    public func dataSource(
        state: CountriesState?, skeletonRows: Int = 20, glyphs: Glyphs = .unicode
    ) -> any TableDataSource {
        if isLive, let state {
            return LiveDataSource(state: state, glyphs: glyphs)
        }
        return SkeletonDataSource(rows: skeletonRows, glyphs: glyphs)
    }
}

/// The top of the screen: a title, the endpoints, and the phase.
public struct HeaderModel: Equatable, Sendable {
    /// The title, left on the first line (`countries watch`).
    public var title: String
    /// The endpoints, on the second line (omitted when empty).
    public var endpoints: String
    /// The phase text, right on the first line.
    public var phase: String
    /// Whether the first line is drawn as an alert (stale, connecting).
    public var alert: Bool

    /// Creates a header from texts.
    public init(title: String, endpoints: String = "", phase: String = "", alert: Bool = false) {
        self.title = title
        self.endpoints = endpoints
        self.phase = phase
        self.alert = alert
    }

    /// Creates a header for a phase; anything but live is an alert.
    public init(title: String, endpoints: String = "", phase: ViewPhase, glyphs: Glyphs = .unicode) {
        self.init(title: title, endpoints: endpoints, phase: phase.text(glyphs), alert: !phase.isLive)
    }
}

/// The bottom of the screen: a summary, the last change, and a status line for `select`.
public struct FooterModel: Equatable, Sendable {
    /// `3 of 8 visited`, or empty.
    public var summary: String
    /// `France ✓ · seq 12 · 2 s ago`, or nil before any change.
    public var lastChange: String?
    /// The result of the last selection, for `select`; nil hides the line.
    public var status: String?
    /// Whether ``status`` reports an error.
    public var statusIsError: Bool

    /// Creates a footer.
    public init(
        summary: String = "", lastChange: String? = nil, status: String? = nil, statusIsError: Bool = false
    ) {
        self.summary = summary
        self.lastChange = lastChange
        self.status = status
        self.statusIsError = statusIsError
    }

    /// `N of M visited`.
    public static func summary(visited: Int, total: Int) -> String {
        "\(visited) of \(total) visited"
    }

    /// The summary of a state, or empty when there is none (a skeleton shows no counts).
    public static func summary(of state: CountriesState?) -> String {
        guard let state else { return "" }
        return summary(visited: state.visitedCount, total: state.count)
    }
}

/// Texts that describe a change for the footer.
public enum LastChange {
    /// `France ✓ · seq 12 · 2 s ago`; `added Peru · seq 13 · just now`; `reset · seq 14 · 1 min ago`.
    ///
    /// `age` is the time since the event arrived.
    public static func describe(_ event: Event, age: Duration, glyphs: Glyphs = .unicode) -> String {
        let what: String
        switch event.kind {
        case .changed(let row):
            what = "\(VisibleText.escaped(row.name)) \(row.visited ? glyphs.visited : glyphs.cleared)"
        case .added(let row): what = "added \(VisibleText.escaped(row.name))"
        case .removed(let row): what = "removed \(VisibleText.escaped(row.name))"
        case .reset: what = "reset"
        }
        let sep = glyphs.separator
        return "\(what)\(sep)seq \(event.seq)\(sep)\(describe(age: age))"
    }

    /// `just now`, `2 s ago`, `3 min ago`, `2 h ago`.
    public static func describe(age: Duration) -> String {
        let seconds = max(0, age.components.seconds)
        switch seconds {
        case 0: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3600: return "\(seconds / 60) min ago"
        default: return "\(seconds / 3600) h ago"
        }
    }
}
