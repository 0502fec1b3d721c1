import CountriesCore
import Etcd
import Foundation
import Testing

@testable import CountriesReplication

/// One commit's entry of the event log (``EtcdLayout/entries(in:seedRows:)``): its events one a
/// line under the key of its first seq. Anyone on etcd's port can write a value there, so a
/// value is taken only when every line is the event its place names.
@Suite struct EtcdLogEntryTests {
    private let layout = EtcdLayout(prefix: "/e/")
    private let seedRows = SeedList.standard.enumerated().map { IndexedCountry($0.element, at: $0.offset) }

    private func toggle(_ seq: UInt64) -> Event {
        Event(seq: seq, kind: .changed(IndexedCountry(index: 2, name: "Albania", visited: seq % 2 == 0)))
    }

    private func kv(_ seq: UInt64, _ lines: [Data]) -> EtcdKeyValue {
        EtcdKeyValue(
            key: layout.event(seq), value: EtcdLayout.encodeEntry(lines), createRevision: 1, modRevision: 1,
            version: 1)
    }

    @Test func anEntryIsItsEventsInSeqOrderEachWithTheBytesToPublish() throws {
        let events = (40...43).map(toggle)
        let entries = try #require(
            layout.entries(in: kv(40, events.map { $0.encoded() }), seedRows: seedRows))
        #expect(entries.map(\.event) == events)
        #expect(entries.map(\.body) == events.map { $0.encoded() })
        // A reset's marker is published as the reset to the seed.
        let marker = EtcdResetMarker(seq: 44, store: nil)
        let withReset = try #require(
            layout.entries(in: kv(43, [toggle(43).encoded(), marker.encoded]), seedRows: seedRows))
        #expect(withReset[1].body == marker.event(seedRows: seedRows).encoded())
    }

    /// The cut every entry and id log entry goes through, against the standard library's.
    @Test func linesAreCutAsSplitCutsThem() {
        let values = ["", "\n", "\n\n", "a", "a\n", "\na", "a\nb", "a\n\nb\n", "ab\ncd\nef\ngh"]
        for text in values {
            let value = Data(text.utf8)
            for maxSplits in [0, 1, 2, 3, .max] {
                let expected = value.split(
                    separator: 0x0A, maxSplits: maxSplits, omittingEmptySubsequences: false)
                #expect(
                    EtcdLayout.lines(of: value, maxSplits: maxSplits) == expected.map { Data($0) },
                    "\(text.debugDescription) at most \(maxSplits) cuts")
            }
        }
        // A slice's indices do not start at 0: the cut is of its bytes.
        let slice = Data("x\ny\nz".utf8).dropFirst(2)
        #expect(EtcdLayout.lines(of: slice, maxSplits: .max) == [Data("y".utf8), Data("z".utf8)])
    }

    /// A store from before entries kept an event a key: each reads as an entry of one.
    @Test func anEventAKeyReadsAsAnEntryOfOne() throws {
        let event = toggle(7)
        let old = EtcdKeyValue(
            key: layout.event(7), value: event.encoded(), createRevision: 1, modRevision: 1, version: 1)
        #expect(layout.events(in: old, seedRows: seedRows) == [event])
        #expect(EtcdLayout.encodeEntry([event.encoded()]) == event.encoded())
    }

    /// A value is refused whole, never read in part: a line out of seq order or of another seq
    /// than its place, an empty line, a line that is no event, a key outside the log, or more
    /// lines than a commit writes.
    @Test func aValueThatIsNotItsKeysEventsIsRefused() {
        let encoded = (10...12).map { toggle($0).encoded() }
        let refused: [(String, EtcdKeyValue)] = [
            ("seqs swapped", kv(10, [encoded[1], encoded[0], encoded[2]])),
            ("a seq skipped", kv(10, [encoded[0], encoded[2]])),
            ("under another key", kv(11, encoded)),
            ("an empty line", kv(10, [encoded[0], Data(), encoded[1]])),
            ("a trailing newline", kv(10, [encoded[0], encoded[1], Data()])),
            ("a line that is no event", kv(10, [encoded[0], Data("forged".utf8)])),
            (
                "a key outside the log",
                EtcdKeyValue(key: "/e/seq", value: encoded[0], createRevision: 1, modRevision: 1, version: 1)
            ),
            (
                "a seq spelled otherwise",
                EtcdKeyValue(
                    key: "/e/events/+10", value: encoded[0], createRevision: 1, modRevision: 1, version: 1)
            ),
            (
                "a seq without its zeros",
                EtcdKeyValue(
                    key: "/e/events/10", value: encoded[0], createRevision: 1, modRevision: 1, version: 1)
            ),
            (
                // Its second line's seq overflowed: every replica that read the log trapped.
                "the top seq",
                EtcdKeyValue(
                    key: "/e/events/18446744073709551615",
                    value: EtcdLayout.encodeEntry([encoded[0], encoded[1]]), createRevision: 1,
                    modRevision: 1,
                    version: 1)
            ),
            (
                "more lines than an entry holds",
                kv(1, (1...UInt64(EtcdLayout.eventsPerEntry + 1)).map { toggle($0).encoded() })
            ),
        ]
        for (why, value) in refused {
            #expect(layout.entries(in: value, seedRows: seedRows) == nil, "\(why)")
        }
        let full = (1...UInt64(EtcdLayout.eventsPerEntry)).map { toggle($0).encoded() }
        #expect(layout.entries(in: kv(1, full), seedRows: seedRows)?.count == EtcdLayout.eventsPerEntry)
    }

    /// Only the key ``EtcdLayout/event(_:)`` makes names a seq, and no seq past `Int64.max`.
    @Test func onlyTheCanonicalKeyNamesASeq() {
        #expect(layout.seq(ofEventKey: layout.event(10)) == 10)
        #expect(layout.seq(ofEventKey: layout.event(UInt64(Int64.max))) == UInt64(Int64.max))
        for key in [
            "/e/events/+0000000000000000010", "/e/events/10", "/e/events/ 0000000000000000010",
            layout.event(UInt64(Int64.max) + 1), layout.event(.max), "/e/events/000000000000000001O",
        ] {
            #expect(layout.seq(ofEventKey: key) == nil, "\(key)")
        }
    }

    /// The entry that may hold a seq is keyed at most an entry's width before it.
    @Test func theFirstKeyThatMayHoldASeq() {
        #expect(EtcdLayout.firstEntry(holding: 1) == 1)
        #expect(EtcdLayout.firstEntry(holding: 32) == 1)
        #expect(EtcdLayout.firstEntry(holding: 33) == 2)
        #expect(EtcdLayout.firstEntry(holding: 1_000) == 969)
    }
}
