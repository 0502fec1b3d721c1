/// Approximate terminal column widths: 2 for East Asian wide characters and emoji, 1 otherwise.
///
/// Good enough to keep a line from wrapping; it does not try to match every terminal's tables.
public enum DisplayWidth {
    /// The columns one character takes.
    public static func of(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.value < 0x1100 { return 1 }
        if first.properties.isEmojiPresentation { return 2 }
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return isWide(first.value) ? 2 : 1
    }

    /// The columns a string takes.
    public static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The longest prefix of `text` that fits in `columns`. A wide character that would
    /// straddle the edge is left out.
    public static func truncate(_ text: String, to columns: Int) -> String {
        guard columns > 0 else { return "" }
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let width = of(text[index])
            if used + width > columns { return String(text[..<index]) }
            used += width
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// `text` when it fits in `columns`; otherwise its longest prefix that leaves room for
    /// `ellipsis`, then `ellipsis`, so that a person sees the text was cut (a name that runs
    /// past the edge would otherwise read as a shorter name). With no room for the ellipsis,
    /// the plain cut.
    public static func truncate(_ text: String, to columns: Int, ellipsis: String) -> String {
        guard of(text) > columns else { return text }
        let room = columns - of(ellipsis)
        guard room > 0 else { return truncate(text, to: columns) }
        return truncate(text, to: room) + ellipsis
    }

    /// `text` truncated to `columns` and padded with spaces on the right to exactly `columns`.
    public static func pad(_ text: String, to columns: Int) -> String {
        padRight(truncate(text, to: columns), to: columns)
    }

    /// `text` padded with spaces on the right to at least `columns` (never truncated).
    public static func padRight(_ text: String, to columns: Int) -> String {
        let missing = columns - of(text)
        return missing > 0 ? text + String(repeating: " ", count: missing) : text
    }

    /// `text` padded with spaces on the left to at least `columns` (never truncated).
    public static func padLeft(_ text: String, to columns: Int) -> String {
        let missing = columns - of(text)
        return missing > 0 ? String(repeating: " ", count: missing) + text : text
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
