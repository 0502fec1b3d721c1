/// The characters the screen draws with, in a Unicode set and a plain ASCII set.
///
/// Within one set, ``visited`` and ``unvisited`` have the same display width, so the mark
/// column never shifts when a row is toggled.
public struct Glyphs: Equatable, Sendable {
    /// The mark of a visited country: `✓` or `[x]` (the seed's checkmark).
    public var visited: String
    /// The mark of a country not visited: a blank or `[ ]`.
    public var unvisited: String
    /// How a change that cleared `visited` is described in the footer: `✗` or `[ ]`.
    public var cleared: String
    /// The character skeleton rows are drawn with: `░` or `.`.
    public var placeholderFill: Character
    /// The separator between parts of a status text: ` · ` or ` - `.
    public var separator: String
    /// An ellipsis: `…` or `...`.
    public var ellipsis: String

    /// Glyphs for a terminal that shows UTF-8.
    public static let unicode = Glyphs(
        visited: "✓", unvisited: " ", cleared: "✗", placeholderFill: "░", separator: " · ", ellipsis: "…")

    /// Glyphs for a terminal limited to ASCII.
    public static let ascii = Glyphs(
        visited: "[x]", unvisited: "[ ]", cleared: "[ ]", placeholderFill: ".", separator: " - ",
        ellipsis: "...")
}

/// What the terminal can show, decided from the environment alone (a pure value).
public struct TerminalCapabilities: Equatable, Sendable {
    /// Whether SGR colour and emphasis may be used.
    public var color: Bool
    /// Whether the terminal shows UTF-8, so that `✓` and `░` may be drawn.
    public var utf8: Bool

    /// Creates capabilities as given.
    public init(color: Bool, utf8: Bool) {
        self.color = color
        self.utf8 = utf8
    }

    /// Reads capabilities from an environment such as `ProcessInfo.processInfo.environment`.
    ///
    /// Colour is off when `NO_COLOR` is present and not empty (as no-color.org specifies), when
    /// `TERM` is unset, empty or `dumb`, or when `outputIsTerminal` is false. UTF-8 is on when the
    /// first of `LC_ALL`, `LC_CTYPE`, `LANG` that is set and not empty names a UTF-8 codeset
    /// (`UTF-8` or `utf8`, in any case); with none of them set the locale is POSIX, so ASCII.
    public init(environment: [String: String], outputIsTerminal: Bool = true) {
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let term = environment["TERM"] ?? ""
        self.color = outputIsTerminal && !noColor && !term.isEmpty && term != "dumb"

        let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy
            .compactMap { environment[$0] }
            .first { !$0.isEmpty }
        let codeset = (locale ?? "").lowercased().replacingDashes()
        self.utf8 = codeset.contains("utf8")
    }

    /// The glyph set for this terminal.
    public var glyphs: Glyphs { utf8 ? .unicode : .ascii }
}

extension String {
    fileprivate func replacingDashes() -> String {
        String(filter { $0 != "-" && $0 != "_" })
    }
}
