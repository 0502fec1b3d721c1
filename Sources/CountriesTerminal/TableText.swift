import CountriesCore

/// The table as plain lines, for when standard output is not a terminal: no escape sequences,
/// no header or footer, one country per line as `index  mark name` (the same columns as the
/// live table, without the gutter), trailing blanks trimmed.
public enum TableText {
    /// Every row of `dataSource`.
    public static func lines(_ dataSource: some TableDataSource) -> [String] {
        let count = dataSource.numberOfRows
        let indexWidth = String(max(0, count - 1)).count
        let rows = (0..<count).map { dataSource.row(at: $0) }
        let markWidth = rows.map { DisplayWidth.of($0.mark) }.max() ?? 0
        return rows.map { row in
            let line =
                DisplayWidth.padLeft(row.indexText, to: indexWidth) + "  "
                + DisplayWidth.pad(row.mark, to: markWidth) + " " + row.name
            return String(line.reversed().drop(while: { $0 == " " }).reversed())
        }
    }

    /// Every country of `state`, with `glyphs`' marks.
    public static func lines(_ state: CountriesState, glyphs: Glyphs = .unicode) -> [String] {
        lines(LiveDataSource(state: state, glyphs: glyphs))
    }

    /// The lines joined, each ending with a newline.
    public static func text(_ state: CountriesState, glyphs: Glyphs = .unicode) -> String {
        lines(state, glyphs: glyphs).map { $0 + "\n" }.joined()
    }
}
