import CountriesCore

/// The table as plain lines, for `list` and for `watch` when standard output is not a
/// terminal: no escape sequences, one country per line as `index  name  mark` (the name padded
/// so the marks line up, nothing after an unvisited name), trailing blanks trimmed. Names are
/// shown as ``VisibleText`` escapes them (`Fr\u{1B}ance`), padded by what they show.
public enum TableText {
    /// The widest the name column is padded to: the longest name of the world list. One longer
    /// name (up to 100 characters, or 600 columns escaped) is written whole with its mark after
    /// it, rather than padding every other row out to it.
    public static let nameColumnLimit = 44

    /// One line per row, with `glyphs`' mark for a visited country.
    public static func lines(_ rows: [IndexedCountry], glyphs: Glyphs = .unicode) -> [String] {
        let indexWidth = String(max(0, (rows.map(\.index).max() ?? 0))).count
        let names = rows.map { VisibleText.escaped($0.name) }
        let nameWidth = min(names.map { DisplayWidth.of($0) }.max() ?? 0, nameColumnLimit)
        return zip(rows, names).map { row, name in
            let line =
                DisplayWidth.padLeft(String(row.index), to: indexWidth) + "  "
                + DisplayWidth.padRight(name, to: nameWidth) + "  " + (row.visited ? glyphs.visited : "")
            return String(line.reversed().drop(while: { $0 == " " }).reversed())
        }
    }

    /// Every country of `state`.
    public static func lines(_ state: CountriesState, glyphs: Glyphs = .unicode) -> [String] {
        lines(state.rows, glyphs: glyphs)
    }

    /// What piped `watch` prints per change: `seq S · V of N visited`, the table, then an empty
    /// line that ends the block.
    public static func block(_ state: CountriesState, glyphs: Glyphs = .unicode) -> [String] {
        ["seq \(state.seq)\(glyphs.separator)\(FooterModel.summary(of: state))"]
            + lines(state, glyphs: glyphs) + [""]
    }

    /// The lines joined, each ending with a newline.
    public static func text(_ state: CountriesState, glyphs: Glyphs = .unicode) -> String {
        lines(state, glyphs: glyphs).map { $0 + "\n" }.joined()
    }
}
