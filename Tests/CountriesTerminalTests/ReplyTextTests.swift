import CountriesCore
import Testing

@testable import CountriesTerminal

@Suite struct ReplyTextTests {
    let rows = [
        IndexedCountry(index: 0, name: "United States", visited: true),
        IndexedCountry(index: 1, name: "France", visited: false),
    ]

    @Test func listIsTheTableAndASummary() {
        #expect(
            ReplyText.list(Reply(seq: 3, countries: rows), glyphs: .unicode) == [
                "0  United States  ✓", "1  France", "1 of 2 visited (seq 3)",
            ])
        #expect(ReplyText.list(Reply(seq: 3, countries: rows), glyphs: .ascii)[0] == "0  United States  [x]")
        #expect(ReplyText.get(Reply(seq: 3, country: rows[1]), glyphs: .unicode) == ["1  France"])
    }

    @Test func changesSayWhatHappenedAndTheSeq() {
        #expect(ReplyText.changed(Reply(seq: 4, country: rows[0])) == ["United States: visited (seq 4)"])
        #expect(ReplyText.changed(Reply(seq: 5, country: rows[1])) == ["France: not visited (seq 5)"])
        #expect(ReplyText.added(Reply(seq: 6, country: rows[1])) == ["Added France at index 1 (seq 6)"])
        #expect(ReplyText.removed(Reply(seq: 7, country: rows[1])) == ["Removed France from index 1 (seq 7)"])
        #expect(ReplyText.reset(Reply(seq: 8, countries: rows)) == ["Reset to 2 countries (seq 8)"])
        #expect(ReplyText.changed(Reply(seq: 9)).isEmpty)
    }

    @Test func eventLines() {
        #expect(
            ReplyText.event(Event(seq: 12, kind: .changed(rows[0])), glyphs: .unicode)
                == "12  country.changed  0 United States ✓")
        #expect(
            ReplyText.event(Event(seq: 13, kind: .removed(rows[1])), glyphs: .ascii)
                == "13  country.removed  1 France")
        #expect(
            ReplyText.event(Event(seq: 14, kind: .reset(rows)), glyphs: .unicode)
                == "14  countries.reset  2 countries")
    }
}

/// Issue 22: every name and value from the wire in the plain-text output (`list`, `get`,
/// `history`, `events`, piped `watch`, `toggle`, `add`, `remove`, `status`) is escaped.
@Suite struct HostileNameTextTests {
    static let hostile = "Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"
    static let shown = #"Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"#
    let rows = [
        IndexedCountry(index: 0, name: hostile, visited: true),
        IndexedCountry(index: 1, name: "France", visited: false),
    ]

    func isClean(_ lines: [String]) -> Bool {
        lines.allSatisfy { !$0.unicodeScalars.contains(where: VisibleText.isEscaped) }
    }

    @Test func tablesAndRepliesShowTheNameEscapedAndAligned() {
        let list = ReplyText.list(Reply(seq: 3, countries: rows), glyphs: .unicode)
        #expect(list[0] == "0  \(Self.shown)  ✓")
        // France's mark column is padded by what the escaped name shows.
        #expect(list[1] == "1  France")
        #expect(ReplyText.get(Reply(seq: 3, country: rows[0]), glyphs: .ascii) == ["0  \(Self.shown)  [x]"])
        #expect(ReplyText.changed(Reply(seq: 4, country: rows[0])) == ["\(Self.shown): visited (seq 4)"])
        #expect(
            ReplyText.added(Reply(seq: 5, country: rows[0])) == ["Added \(Self.shown) at index 0 (seq 5)"])
        #expect(
            ReplyText.removed(Reply(seq: 6, country: rows[0])) == [
                "Removed \(Self.shown) from index 0 (seq 6)"
            ])
        #expect(
            ReplyText.event(Event(seq: 7, kind: .added(rows[0])), glyphs: .unicode)
                == "7  country.added  0 \(Self.shown) ✓")
        let block = TableText.block(CountriesState(rows: rows, seq: 7), glyphs: .unicode)
        #expect(block[1] == "0  \(Self.shown)  ✓")
        #expect(isClean(list) && isClean(block))
        #expect(
            LastChange.describe(Event(seq: 7, kind: .removed(rows[0])), age: .zero)
                == "removed \(Self.shown) · seq 7 · just now")
    }

    @Test func statusValuesFromTheServiceAreEscaped() {
        var status = ServiceStatus()
        status.storePath = "/tmp/x\u{1B}[2J"
        status.endpoints = ["tcp://a\u{202E}b"]
        var reply = Reply(seq: 1, count: 2)
        reply.store = "ab\u{9B}cd"
        reply.status = status
        let lines = ReplyText.status(reply)
        #expect(isClean(lines), "\(lines)")
        #expect(lines.contains { $0.hasSuffix(#"ab\u{9B}cd"#) })
        #expect(lines.contains { $0.hasSuffix(#"/tmp/x\u{1B}[2J"#) })
    }
}
