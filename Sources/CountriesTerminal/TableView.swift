import CountriesCore

/// The layout of the table screen, as a pure value: header, rows, footer, cursor, highlight and
/// scrolling in; a ``Frame`` out.
///
/// A body row reads `> 12  ✓ France`: a two-column gutter (`>` on the cursor row, `*` on the
/// highlighted row, shown with or without colour), the index right-aligned, the mark, the
/// name. The mark comes before the name so that truncation only ever cuts the name.
///
/// Every text is laid out as ``VisibleText`` escapes it (names, the stale reason, the status
/// of `select`, the endpoints): a name from the wire cannot move the cursor or clear the
/// screen, and widths are those of what is shown.
public struct TableView: Equatable, Sendable {
    /// The top of the screen.
    public var header: HeaderModel
    /// The bottom of the screen.
    public var footer: FooterModel
    /// The selected row (`select`), or nil (`watch`).
    public var cursor: Int?
    /// The row that just changed, or nil.
    public var highlighted: Int?
    /// The first row shown. ``layout(_:in:)`` returns the offset it settled on; keep it for the
    /// next frame.
    public var scrollOffset: Int
    /// Whether the view scrolls to show the highlighted row (a `watch` that follows changes);
    /// false keeps the offset where the person scrolled it.
    public var scrollsToHighlight: Bool
    /// What ends a line cut at the screen's edge: `…`, or `...` on an ASCII terminal.
    public var ellipsis: String

    /// Creates a view.
    public init(
        header: HeaderModel, footer: FooterModel = FooterModel(), cursor: Int? = nil,
        highlighted: Int? = nil, scrollOffset: Int = 0, scrollsToHighlight: Bool = true,
        ellipsis: String = Glyphs.unicode.ellipsis
    ) {
        self.header = header
        self.footer = footer
        self.cursor = cursor
        self.highlighted = highlighted
        self.scrollOffset = scrollOffset
        self.scrollsToHighlight = scrollsToHighlight
        self.ellipsis = ellipsis
    }

    /// The result of a layout.
    public struct Layout: Equatable, Sendable {
        /// The screen.
        public var frame: Frame
        /// The first row shown: keeps the cursor (or, without one, the highlight) visible.
        public var scrollOffset: Int
        /// How many rows the body shows: the page size for PgUp/PgDn.
        public var bodyHeight: Int
    }

    /// Lays out `dataSource` in a viewport of `size`.
    public func layout(_ dataSource: some TableDataSource, in size: ViewportSize) -> Layout {
        let chrome = chromeLines(size: size)
        let bodyHeight = max(0, size.rows - chrome.top.count - chrome.bottom.count)
        let rowCount = dataSource.numberOfRows
        let offset = Self.scroll(
            offset: scrollOffset, focus: cursor ?? (scrollsToHighlight ? highlighted : nil),
            rowCount: rowCount,
            bodyHeight: bodyHeight)

        var lines = chrome.top
        let visible = offset..<min(rowCount, offset + bodyHeight)
        let rows = visible.map { dataSource.row(at: $0) }
        let indexWidth = String(max(0, rowCount - 1)).count
        let markWidth = rows.map { DisplayWidth.of($0.mark) }.max() ?? 0
        for (index, row) in zip(visible, rows) {
            lines.append(
                bodyLine(row, index: index, indexWidth: indexWidth, markWidth: markWidth, width: size.columns)
            )
        }
        while lines.count < size.rows - chrome.bottom.count { lines.append(.blank) }
        lines += chrome.bottom
        return Layout(frame: Frame(size: size, lines: lines), scrollOffset: offset, bodyHeight: bodyHeight)
    }

    /// The scroll offset that shows `focus` while moving as little as possible, clamped so the
    /// body is as full as the rows allow.
    static func scroll(offset: Int, focus: Int?, rowCount: Int, bodyHeight: Int) -> Int {
        var offset = offset
        if let focus, bodyHeight > 0 {
            if focus < offset { offset = focus }
            if focus >= offset + bodyHeight { offset = focus - bodyHeight + 1 }
        }
        return min(max(0, offset), max(0, rowCount - bodyHeight))
    }

    private func bodyLine(_ row: TableRow, index: Int, indexWidth: Int, markWidth: Int, width: Int)
        -> ScreenLine
    {
        let isCursor = index == cursor
        let isHighlight = index == highlighted
        let gutter = isCursor ? "> " : isHighlight ? "* " : "  "
        let text =
            gutter + DisplayWidth.padLeft(row.indexText, to: indexWidth) + "  "
            + DisplayWidth.pad(row.mark, to: markWidth) + " " + row.name
        let style: LineStyle =
            isCursor ? .cursor : isHighlight ? .highlight : row.isPlaceholder ? .dim : .normal
        return ScreenLine(fit(text, to: width), style: style)
    }

    /// `text` escaped (``VisibleText``), then cut to `width` columns, ending in the ellipsis
    /// when something was cut.
    private func fit(_ text: String, to width: Int) -> String {
        DisplayWidth.truncate(VisibleText.escaped(text), to: width, ellipsis: ellipsis)
    }

    /// The header and footer lines that fit, leaving at least one body row when possible.
    /// In a short viewport the endpoints go first, then the status, then the summary.
    private func chromeLines(size: ViewportSize) -> (top: [ScreenLine], bottom: [ScreenLine]) {
        let width = size.columns
        let title = ScreenLine(titleText(width: width), style: header.alert ? .alert : .header)
        let endpoints =
            header.endpoints.isEmpty
            ? nil : ScreenLine(fit(header.endpoints, to: width), style: .dim)
        var summaryText = footer.summary
        if let lastChange = footer.lastChange {
            summaryText += (summaryText.isEmpty ? "" : "   ") + "last: " + lastChange
        }
        let summary =
            summaryText.isEmpty ? nil : ScreenLine(fit(summaryText, to: width), style: .dim)
        let status = footer.status.map {
            ScreenLine(fit($0, to: width), style: footer.statusIsError ? .alert : .normal)
        }

        // In priority order; each is kept only if a body row still fits.
        var keepTitle = false
        var keepSummary = false
        var keepStatus = false
        var keepEndpoints = false
        var used = 0
        func fits() -> Bool { used + 2 <= size.rows }
        if size.rows >= 1 {
            keepTitle = true
            used += 1
        }
        if summary != nil, fits() {
            keepSummary = true
            used += 1
        }
        if status != nil, fits() {
            keepStatus = true
            used += 1
        }
        if endpoints != nil, fits() {
            keepEndpoints = true
            used += 1
        }

        var top: [ScreenLine] = []
        if keepTitle { top.append(title) }
        if keepEndpoints, let endpoints { top.append(endpoints) }
        var bottom: [ScreenLine] = []
        if keepSummary, let summary { bottom.append(summary) }
        if keepStatus, let status { bottom.append(status) }
        return (top, bottom)
    }

    /// The title left and the phase right-aligned; when both do not fit, they are joined and cut.
    private func titleText(width: Int) -> String {
        let title = VisibleText.escaped(header.title)
        let phase = VisibleText.escaped(header.phase)
        let gap = width - DisplayWidth.of(title) - DisplayWidth.of(phase)
        if phase.isEmpty { return DisplayWidth.truncate(title, to: width, ellipsis: ellipsis) }
        if gap >= 2 { return title + String(repeating: " ", count: gap) + phase }
        return DisplayWidth.truncate(title + "  " + phase, to: width, ellipsis: ellipsis)
    }
}
