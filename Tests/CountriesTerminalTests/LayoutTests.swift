import CountriesCore
import Testing

@testable import CountriesTerminal

func manyCountries(_ count: Int) -> CountriesState {
    CountriesState(countries: (0..<count).map { Country(name: "Country \($0)") }, seq: 1)
}

@Suite struct LayoutTests {
    let state = CountriesState(countries: SeedList.standard, seq: 12)
    var header: HeaderModel {
        HeaderModel(
            title: "countries watch", endpoints: "tcp://127.0.0.1:5555  tcp://127.0.0.1:5556",
            phase: .live, seq: 12)
    }
    var footer: FooterModel {
        FooterModel(summary: FooterModel.summary(of: state), lastChange: "France ✓ · seq 12 · 2 s ago")
    }

    @Test func headerBodyFooter() {
        let view = TableView(header: header, footer: footer)
        let layout = view.layout(LiveDataSource(state: state), in: ViewportSize(rows: 14, columns: 60))
        let texts = layout.frame.texts
        #expect(texts.count == 14)
        #expect(texts[0].hasPrefix("countries watch"))
        #expect(texts[0].hasSuffix("live · seq 12"))
        #expect(DisplayWidth.of(texts[0]) == 60)
        #expect(texts[1] == "tcp://127.0.0.1:5555  tcp://127.0.0.1:5556")
        #expect(texts[2] == "  0  ✓ United States")
        #expect(texts[3] == "  1    United Kingdom")
        #expect(texts[9] == "  7    Romania")
        #expect(Array(texts[10...12]) == ["", "", ""])
        #expect(texts[13] == "1 of 8 visited   last: France ✓ · seq 12 · 2 s ago")
        #expect(layout.frame.lines[0].style == .header)
        #expect(layout.frame.lines[1].style == .dim)
        #expect(layout.frame.lines[2].style == .normal)
        #expect(layout.bodyHeight == 11)
    }

    @Test func staleHeaderIsAnAlertAndRowsAreSkeleton() {
        let view = TableView(
            header: HeaderModel(title: "countries watch", phase: .stale("no heartbeat for 3 s"), seq: 0),
            footer: FooterModel())
        let layout = view.layout(SkeletonDataSource(rows: 3), in: ViewportSize(rows: 5, columns: 50))
        #expect(layout.frame.lines[0].style == .alert)
        #expect(layout.frame.texts[0].hasSuffix("stale: no heartbeat for 3 s"))
        #expect(layout.frame.lines[1].style == .dim)
        #expect(layout.frame.texts[1].contains("░"))
        #expect(!layout.frame.texts.joined().contains("France"))
    }

    @Test func statusLineAndCursorMarkers() {
        var footer = footer
        footer.status = "Selected country: France (now visited)"
        let view = TableView(header: header, footer: footer, cursor: 2, highlighted: 4)
        let layout = view.layout(LiveDataSource(state: state), in: ViewportSize(rows: 14, columns: 60))
        let lines = layout.frame.lines
        #expect(lines[4] == ScreenLine("> 2    France", style: .cursor))
        #expect(lines[6] == ScreenLine("* 4    Spain", style: .highlight))
        #expect(lines[13] == ScreenLine("Selected country: France (now visited)", style: .normal))
        #expect(lines[12].text.hasPrefix("1 of 8 visited"))
    }

    @Test func errorStatusIsAnAlert() {
        let footer = FooterModel(summary: "x", status: "no country named \"Peru\"", statusIsError: true)
        let view = TableView(header: header, footer: footer)
        let frame = view.layout(LiveDataSource(state: state), in: ViewportSize(rows: 10, columns: 40)).frame
        #expect(frame.lines[9].style == .alert)
    }

    @Test func scrollingKeepsTheCursorVisible() {
        let source = LiveDataSource(state: manyCountries(100))
        var view = TableView(header: HeaderModel(title: "t"), cursor: 50)
        let size = ViewportSize(rows: 11, columns: 40)  // one header line, ten body rows
        var layout = view.layout(source, in: size)
        #expect(layout.bodyHeight == 10)
        #expect(layout.scrollOffset == 41)
        #expect(layout.frame.texts[10] == "> 50    Country 50")
        view.scrollOffset = layout.scrollOffset
        view.cursor = 45  // still visible: no scroll
        layout = view.layout(source, in: size)
        #expect(layout.scrollOffset == 41)
        view.cursor = 3
        layout = view.layout(source, in: size)
        #expect(layout.scrollOffset == 3)
        #expect(layout.frame.texts[1].hasPrefix(">  3"))
        view.cursor = 99
        layout = view.layout(source, in: size)
        #expect(layout.scrollOffset == 90)
        #expect(layout.frame.texts[10].hasPrefix("> 99"))
    }

    @Test func watchKeepsTheHighlightVisible() {
        let source = LiveDataSource(state: manyCountries(100))
        let view = TableView(header: HeaderModel(title: "t"), highlighted: 70, scrollOffset: 0)
        let layout = view.layout(source, in: ViewportSize(rows: 11, columns: 40))
        #expect((layout.scrollOffset..<layout.scrollOffset + 10).contains(70))
        #expect(layout.frame.lines.contains { $0.style == .highlight && $0.text.hasPrefix("* 70") })
    }

    @Test func watchWithoutFocusKeepsItsOffsetButClampsIt() {
        let source = LiveDataSource(state: manyCountries(20))
        var view = TableView(header: HeaderModel(title: "t"), scrollOffset: 5)
        #expect(view.layout(source, in: ViewportSize(rows: 11, columns: 40)).scrollOffset == 5)
        view.scrollOffset = 50
        #expect(view.layout(source, in: ViewportSize(rows: 11, columns: 40)).scrollOffset == 10)
        #expect(view.layout(source, in: ViewportSize(rows: 40, columns: 40)).scrollOffset == 0)
    }

    @Test func linesAreTruncatedToTheWidth() {
        let state = CountriesState(countries: [Country(name: "The United Kingdom of Great Britain")], seq: 1)
        let view = TableView(header: HeaderModel(title: "countries watch", phase: "live · seq 1"))
        let frame = view.layout(LiveDataSource(state: state), in: ViewportSize(rows: 3, columns: 16)).frame
        for text in frame.texts { #expect(DisplayWidth.of(text) <= 16) }
        // A cut name ends in an ellipsis: "The Unite" alone would read as a name of its own.
        #expect(frame.texts[1] == "  0    The Unit…")
        var ascii = view
        ascii.ellipsis = Glyphs.ascii.ellipsis
        let asciiFrame = ascii.layout(LiveDataSource(state: state), in: ViewportSize(rows: 3, columns: 16))
            .frame
        #expect(asciiFrame.texts[1] == "  0    The Un...")
        // A line that fits is left whole, with no ellipsis.
        let wide = view.layout(LiveDataSource(state: state), in: ViewportSize(rows: 3, columns: 42)).frame
        #expect(wide.texts[1] == "  0    The United Kingdom of Great Britain")
    }

    @Test func truncationWithAnEllipsisFitsTheWidth() {
        #expect(DisplayWidth.truncate("France", to: 6, ellipsis: "…") == "France")
        #expect(DisplayWidth.truncate("France", to: 5, ellipsis: "…") == "Fran…")
        #expect(DisplayWidth.truncate("France", to: 5, ellipsis: "...") == "Fr...")
        // A wide character that would straddle the ellipsis is left out.
        #expect(DisplayWidth.truncate("日本国", to: 5, ellipsis: "…") == "日本…")
        #expect(DisplayWidth.truncate("日本国", to: 4, ellipsis: "…") == "日…")
        // No room for the ellipsis: the plain cut.
        #expect(DisplayWidth.truncate("France", to: 1, ellipsis: "…") == "F")
        #expect(DisplayWidth.truncate("France", to: 2, ellipsis: "...") == "Fr")
        #expect(DisplayWidth.truncate("France", to: 0, ellipsis: "…") == "")
    }

    @Test func wideCharactersCountTwice() {
        #expect(DisplayWidth.of("日本") == 4)
        #expect(DisplayWidth.of("🇫🇷") == 2)
        #expect(DisplayWidth.of("Côte d’Ivoire") == 13)
        #expect(DisplayWidth.truncate("日本国", to: 5) == "日本")
        #expect(DisplayWidth.pad("日本国", to: 5) == "日本 ")
        let state = CountriesState(countries: [Country(name: "日本国日本国")], seq: 1)
        let frame = TableView(header: HeaderModel(title: "t")).layout(
            LiveDataSource(state: state), in: ViewportSize(rows: 2, columns: 12)
        ).frame
        #expect(frame.texts[1] == "  0    日本…")
    }

    @Test func shortViewportsDropChromeBeforeRows() {
        var footer = footer
        footer.status = "status"
        let view = TableView(header: header, footer: footer)
        let source = LiveDataSource(state: state)
        let three = view.layout(source, in: ViewportSize(rows: 3, columns: 60))
        #expect(three.bodyHeight == 1)
        #expect(three.frame.texts[0].hasPrefix("countries watch"))
        #expect(three.frame.texts[1].hasPrefix("  0"))
        #expect(three.frame.texts[2].hasPrefix("1 of 8"))
        let one = view.layout(source, in: ViewportSize(rows: 1, columns: 60))
        #expect(one.frame.lines.count == 1)
        #expect(view.layout(source, in: ViewportSize(rows: 0, columns: 60)).frame.lines.isEmpty)
    }

    @Test func footerTexts() {
        #expect(FooterModel.summary(visited: 3, total: 8) == "3 of 8 visited")
        #expect(FooterModel.summary(of: nil) == "")
        let changed = Event(seq: 12, kind: .changed(IndexedCountry(index: 2, name: "France", visited: true)))
        #expect(LastChange.describe(changed, age: .seconds(2)) == "France ✓ · seq 12 · 2 s ago")
        let cleared = Event(seq: 13, kind: .changed(IndexedCountry(index: 2, name: "France", visited: false)))
        #expect(LastChange.describe(cleared, age: .milliseconds(300)) == "France ✗ · seq 13 · just now")
        #expect(
            LastChange.describe(cleared, age: .seconds(2), glyphs: .ascii) == "France [ ] - seq 13 - 2 s ago")
        let added = Event(seq: 14, kind: .added(IndexedCountry(index: 8, name: "Peru", visited: false)))
        #expect(LastChange.describe(added, age: .seconds(125)) == "added Peru · seq 14 · 2 min ago")
        let removed = Event(seq: 15, kind: .removed(IndexedCountry(index: 8, name: "Peru", visited: false)))
        #expect(LastChange.describe(removed, age: .seconds(7200)) == "removed Peru · seq 15 · 2 h ago")
        #expect(
            LastChange.describe(Event(seq: 16, kind: .reset([])), age: .zero) == "reset · seq 16 · just now")
    }
}
