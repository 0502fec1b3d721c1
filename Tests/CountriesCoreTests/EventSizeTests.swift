import CountriesCore
import Foundation
import Testing

/// ``Event/estimatedBytes``: what history pages and a commit's event budget count, without
/// encoding each event. It must follow the encoding closely enough that a page or a commit
/// budgeted by it stays near its bound in bytes, also for names of multi-byte characters.
@Suite struct EventSizeTests {
    /// A store identity as the service stamps on every event (a UUID).
    private let store = "5f0c2e7a-8d6b-4c1e-9f3a-2b7d6e8c1a40"

    @Test(arguments: [1, 40, 100])
    func aRowEventsEstimateIsWithinItsEncodingsSpread(nameLength: Int) {
        for character in ["a", "é", "🇫🇷", "\u{1F600}"] {
            let name = String(repeating: character, count: nameLength)
            let row = IndexedCountry(index: 9_999, name: name, visited: true)
            for kind in [Event.Kind.changed(row), .added(row), .removed(row)] {
                let event = Event(seq: 123_456, kind: kind, store: store)
                let encoded = event.encoded().count
                // The name's bytes count in full; the JSON around it is about constant.
                #expect(event.estimatedBytes >= name.utf8.count)
                #expect(abs(event.estimatedBytes - encoded) <= 80, "\(kind) \(character): \(encoded) bytes")
            }
        }
    }

    @Test func aResetsEstimateGrowsWithEachRow() {
        let rows = (0..<1_000).map {
            IndexedCountry(index: $0, name: "Country number \($0)", visited: $0 % 2 == 0)
        }
        let event = Event(seq: 7, kind: .reset(rows), store: store)
        let encoded = event.encoded().count
        #expect(event.estimatedBytes > encoded / 2 && event.estimatedBytes < encoded * 2, "\(encoded) bytes")
        let one = Event(seq: 7, kind: .reset(Array(rows.prefix(1))), store: store)
        #expect(
            event.estimatedBytes - one.estimatedBytes
                == rows.dropFirst().reduce(0) { $0 + 40 + $1.name.utf8.count })
    }
}
