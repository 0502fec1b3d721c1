/// The size of the screen in character cells.
public struct ViewportSize: Equatable, Hashable, Sendable {
    /// Lines.
    public var rows: Int
    /// Columns.
    public var columns: Int

    /// Creates a size; negative values count as 0.
    public init(rows: Int, columns: Int) {
        self.rows = max(0, rows)
        self.columns = max(0, columns)
    }

    /// The size assumed when the terminal does not say: 24 × 80.
    public static let fallback = ViewportSize(rows: 24, columns: 80)
}

/// How a screen line is drawn. Without colour every style draws as plain text; the `>` and `*`
/// gutter markers carry the cursor and the highlight on their own.
public enum LineStyle: Equatable, Hashable, Sendable, CaseIterable {
    /// Plain text.
    case normal
    /// The title bar.
    case header
    /// The header or status when something is wrong (stale, an error reply).
    case alert
    /// A row that just changed, highlighted briefly.
    case highlight
    /// The selected row in `select`.
    case cursor
    /// Secondary text and skeleton rows.
    case dim
}

/// One line of the screen: plain text (no escape sequences) that fits the width, and a style.
public struct ScreenLine: Equatable, Hashable, Sendable {
    /// The text, already truncated to the width.
    public var text: String
    /// How to draw it.
    public var style: LineStyle

    /// Creates a line.
    public init(_ text: String, style: LineStyle = .normal) {
        self.text = text
        self.style = style
    }

    /// An empty line.
    public static let blank = ScreenLine("")
}

/// Everything on screen: exactly `size.rows` lines.
public struct Frame: Equatable, Sendable {
    /// The size this frame was laid out for.
    public var size: ViewportSize
    /// The lines, top to bottom; `lines.count == size.rows`.
    public var lines: [ScreenLine]

    /// Creates a frame.
    public init(size: ViewportSize, lines: [ScreenLine]) {
        self.size = size
        self.lines = lines
    }

    /// The lines' texts, for tests and plain output.
    public var texts: [String] { lines.map(\.text) }
}
