import CountriesCore

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

    /// Creates a header for the subscription's phase at `seq`; anything but live is an alert.
    public init(
        title: String, endpoints: String = "", phase: SubscriptionPhase, seq: UInt64,
        glyphs: Glyphs = .unicode
    ) {
        self.init(
            title: title, endpoints: endpoints, phase: phase.headerText(seq: seq, glyphs),
            alert: phase != .live)
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
    /// `France ✓ · seq 12 · 2 s ago`; `added Peru · seq 13 · just now`; `reset · seq 14 · 1 min
    /// ago`.
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
