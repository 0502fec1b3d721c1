import CountriesCore

/// Turns frames into terminal output, writing only the lines that changed since the last one.
///
/// For each changed line it emits the cursor move (`CSI row;1H`), the text in its style, and
/// erase-to-end-of-line (`CSI K`). It redraws everything (`CSI H CSI 2J`, then every non-empty
/// line) on the first frame, when the size changed, and after ``invalidate()`` (call it on
/// SIGWINCH, or when something else may have written to the screen).
///
/// The lines' texts are written as ``VisibleText`` escapes them: the view lays them out escaped
/// already, and this is the last stop before the terminal for anything that was not.
///
/// With colour off it emits no SGR sequences at all, so dumb terminals and `NO_COLOR` users see
/// plain text; the table's `>` and `*` gutter markers still show the cursor and the highlight.
/// With colour on, the header and the cursor row are in reverse video, the highlight is black on
/// yellow, alerts bold red, and secondary text dim; bars are padded to the full width so the
/// reverse video spans the line.
public struct FrameRenderer: Sendable {
    /// Whether SGR styles are emitted.
    public var color: Bool
    /// The frame on screen, or nil when the screen must be redrawn in full.
    public private(set) var lastFrame: Frame?

    /// Creates a renderer with nothing drawn yet.
    public init(color: Bool) {
        self.color = color
    }

    /// Forgets what is on screen: the next ``render(_:)`` redraws everything.
    public mutating func invalidate() {
        lastFrame = nil
    }

    /// The bytes that bring the screen from the last frame to `frame`; empty when nothing changed.
    public mutating func render(_ frame: Frame) -> [UInt8] {
        var out = ""
        if let last = lastFrame, last.size == frame.size {
            for (row, line) in frame.lines.enumerated()
            where row >= last.lines.count || last.lines[row] != line {
                if row < last.lines.count,
                    appendChangedTail(
                        of: last.lines[row], becoming: line, row: row, width: frame.size.columns, to: &out)
                {
                    continue
                }
                out += "\u{1B}[\(row + 1);1H"
                append(line, width: frame.size.columns, to: &out)
                out += "\u{1B}[K"
            }
        } else {
            out += color ? "\u{1B}[0m\u{1B}[H\u{1B}[2J" : "\u{1B}[H\u{1B}[2J"
            for (row, line) in frame.lines.enumerated() where !line.text.isEmpty || sgr(line.style) != nil {
                out += "\u{1B}[\(row + 1);1H"
                append(line, width: frame.size.columns, to: &out)
            }
        }
        lastFrame = frame
        return Array(out.utf8)
    }

    /// Rewrites only the end of a line whose beginning did not change (a header whose seq went
    /// up, a footer whose "N s ago" ticked): the cursor goes to the first changed column. Returns
    /// false when that would not save much, and the caller rewrites the whole line.
    private func appendChangedTail(
        of old: ScreenLine, becoming new: ScreenLine, row: Int, width: Int, to out: inout String
    ) -> Bool {
        guard old.style == new.style else { return false }
        let bar = sgr(new.style) != nil && Self.isBar(new.style)
        let oldText = VisibleText.escaped(bar ? DisplayWidth.pad(old.text, to: width) : old.text)
        let newText = VisibleText.escaped(bar ? DisplayWidth.pad(new.text, to: width) : new.text)
        var prefix = 0
        var columns = 0
        for (before, after) in zip(oldText, newText) {
            guard before == after else { break }
            prefix += 1
            columns += DisplayWidth.of(before)
        }
        // Moving the cursor costs about as much as a few characters.
        guard columns >= 8 else { return false }
        let tail = String(newText.dropFirst(prefix))
        out += "\u{1B}[\(row + 1);\(columns + 1)H"
        if let style = sgr(new.style) {
            out += "\u{1B}[\(style)m" + tail + "\u{1B}[0m"
        } else {
            out += tail
        }
        // A padded bar is as wide as before; any other line may have become shorter.
        if !bar { out += "\u{1B}[K" }
        return true
    }

    private func append(_ line: ScreenLine, width: Int, to out: inout String) {
        guard let style = sgr(line.style) else {
            out += VisibleText.escaped(line.text)
            return
        }
        var text = VisibleText.escaped(line.text)
        if Self.isBar(line.style) {
            text = DisplayWidth.pad(text, to: width)
        }
        out += "\u{1B}[\(style)m" + text + "\u{1B}[0m"
    }

    private static func isBar(_ style: LineStyle) -> Bool {
        style == .header || style == .cursor || style == .highlight
    }

    /// The SGR parameters of a style, or nil when it is drawn plain.
    private func sgr(_ style: LineStyle) -> String? {
        guard color else { return nil }
        switch style {
        case .normal: return nil
        case .header: return "7"
        case .alert: return "1;31"
        case .highlight: return "30;43"
        case .cursor: return "7"
        case .dim: return "2"
        }
    }
}
