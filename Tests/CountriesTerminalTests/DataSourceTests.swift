import CountriesCore
import Testing

@testable import CountriesTerminal

@Suite struct DataSourceTests {
    let state = CountriesState(countries: SeedList.standard, seq: 7)

    @Test func liveRowsMatchTheState() {
        let source = LiveDataSource(state: state)
        #expect(source.numberOfRows == 8)
        for (index, country) in state.countries.enumerated() {
            let row = source.row(at: index)
            #expect(row.indexText == String(index))
            #expect(row.name == country.name)
            #expect(row.mark == (country.visited ? "✓" : " "))
            #expect(!row.isPlaceholder)
            #expect(row.country == IndexedCountry(country, at: index))
        }
    }

    @Test func asciiMarks() {
        let source = LiveDataSource(state: state, glyphs: .ascii)
        #expect(source.row(at: 0).mark == "[x]")
        #expect(source.row(at: 1).mark == "[ ]")
    }

    @Test func skeletonHasNoRealNamesAndVariedWidths() {
        let source = SkeletonDataSource(rows: 30)
        #expect(source.numberOfRows == 30)
        let rows = (0..<30).map(source.row(at:))
        let names = Set(state.countries.map(\.name))
        for row in rows {
            #expect(row.isPlaceholder)
            #expect(row.country == nil)
            #expect(row.indexText.isEmpty)
            #expect(!names.contains(row.name))
            #expect(row.name.allSatisfy { $0 == "░" })
            #expect(row.mark.allSatisfy { $0 == " " })
        }
        #expect(Set(rows.map(\.name.count)).count > 5)
    }

    @Test func skeletonAsciiFallback() {
        let row = SkeletonDataSource(rows: 1, glyphs: .ascii).row(at: 0)
        #expect(row.name == "..........")
        #expect(row.mark == "   ")
    }

    @Test func phaseSwapsTheDataSource() {
        #expect(SubscriptionPhase.live.dataSource(state: state) is LiveDataSource)
        #expect(SubscriptionPhase.live.dataSource(state: nil) is SkeletonDataSource)
        #expect(SubscriptionPhase.connecting.dataSource(state: state) is SkeletonDataSource)
        #expect(
            SubscriptionPhase.stale("no heartbeat for 3 s").dataSource(state: state) is SkeletonDataSource)
        #expect(SubscriptionPhase.connecting.dataSource(state: nil, skeletonRows: 5).numberOfRows == 5)
    }

    @Test func phaseTexts() {
        #expect(SubscriptionPhase.live.headerText(seq: 12) == "live · seq 12")
        #expect(
            SubscriptionPhase.stale("no heartbeat for 3 s").headerText(seq: 12)
                == "stale: no heartbeat for 3 s")
        #expect(SubscriptionPhase.connecting.headerText(seq: 0) == "connecting…")
        #expect(SubscriptionPhase.connecting.headerText(seq: 0, .ascii) == "connecting...")
        #expect(SubscriptionPhase.live.headerText(seq: 1, .ascii) == "live - seq 1")
    }

    @Test func tableTextListsEveryCountry() {
        let lines = TableText.lines(state)
        #expect(lines.count == 8)
        // The columns of `countries list`: the name padded so the marks line up.
        #expect(lines[0] == "0  United States   ✓")
        #expect(lines[1] == "1  United Kingdom")
        let ascii = TableText.lines(state, glyphs: .ascii)
        #expect(ascii[0] == "0  United States   [x]")
        #expect(ascii[2] == "2  France")
        #expect(TableText.text(state).hasSuffix("Romania\n"))
        #expect(!TableText.text(state).contains("\u{1B}"))
    }

    @Test func oneLongNameDoesNotPadEveryRow() {
        let long = String(repeating: "Long", count: 25)
        let rows = [
            IndexedCountry(index: 0, name: "France", visited: true),
            IndexedCountry(index: 1, name: long, visited: true),
            IndexedCountry(index: 2, name: "South Georgia and the South Sandwich Islands", visited: true),
        ]
        let lines = TableText.lines(rows)
        // The column is as wide as the world list's longest name, and no wider.
        #expect(lines[0] == "0  France" + String(repeating: " ", count: 38) + "  ✓")
        #expect(lines[1] == "1  \(long)  ✓")
        #expect(lines[2] == "2  South Georgia and the South Sandwich Islands  ✓")
        #expect(lines.allSatisfy { $0.hasSuffix("✓") })
    }

    /// Piped `watch`: a header with the seq and the counts, the table, an empty line.
    @Test func blockIsHeaderTableAndAnEmptyLine() {
        let block = TableText.block(state)
        #expect(block.first == "seq \(state.seq) · \(FooterModel.summary(of: state))")
        #expect(Array(block.dropFirst().dropLast()) == TableText.lines(state))
        #expect(block.last == "")
        #expect(TableText.block(state, glyphs: .ascii).first?.contains("\(state.seq) - ") == true)
    }
}

@Suite struct CapabilitiesTests {
    @Test(
        arguments: [
            (["TERM": "xterm-256color", "LANG": "en_US.UTF-8"], true, true),
            (["TERM": "xterm", "LANG": "en_US.utf8"], true, true),
            (["TERM": "xterm", "NO_COLOR": "1", "LANG": "C.UTF-8"], false, true),
            (["TERM": "xterm", "NO_COLOR": ""], true, false),
            (["TERM": "dumb", "LANG": "en_US.UTF-8"], false, true),
            (["LANG": "en_US.UTF-8"], false, true),
            (["TERM": ""], false, false),
            (["TERM": "xterm"], true, false),
            (["TERM": "xterm", "LANG": "C"], true, false),
            (["TERM": "xterm", "LC_ALL": "C", "LANG": "en_US.UTF-8"], true, false),
            (["TERM": "xterm", "LC_ALL": "", "LC_CTYPE": "de_DE.UTF-8", "LANG": "C"], true, true),
            (["TERM": "xterm", "LC_CTYPE": "POSIX", "LANG": "en_US.UTF-8"], true, false),
            (["TERM": "xterm", "LANG": "ja_JP.eucJP"], true, false),
        ] as [([String: String], Bool, Bool)])
    func matrix(environment: [String: String], color: Bool, utf8: Bool) {
        let capabilities = TerminalCapabilities(environment: environment)
        #expect(capabilities.color == color)
        #expect(capabilities.utf8 == utf8)
        #expect(capabilities.glyphs == (utf8 ? .unicode : .ascii))
    }

    @Test func noColorWhenOutputIsNotATerminal() {
        let capabilities = TerminalCapabilities(environment: ["TERM": "xterm"], outputIsTerminal: false)
        #expect(!capabilities.color)
    }

    @Test func marks() {
        #expect(Glyphs.unicode.visited == "✓")
        #expect(Glyphs.unicode.unvisited == " ")
        #expect(Glyphs.ascii.visited == "[x]")
        #expect(Glyphs.ascii.unvisited == "[ ]")
        for glyphs in [Glyphs.unicode, .ascii] {
            #expect(DisplayWidth.of(glyphs.visited) == DisplayWidth.of(glyphs.unvisited))
        }
    }
}
