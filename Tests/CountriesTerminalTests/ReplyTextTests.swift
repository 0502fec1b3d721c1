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
