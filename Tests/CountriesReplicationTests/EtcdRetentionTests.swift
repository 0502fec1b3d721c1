import CountriesCore
import Foundation
import TestSupport
import Testing

@testable import CountriesReplication
@testable import CountriesStore

/// The bytes a store keeps in etcd at worst, as docs/HA.md ("Limits") states them: the kept
/// events (a reset is a marker, so the largest is a row's), the snapshot while it is switched,
/// and the seed. The request ids are bounded by their generations (``RequestIDWindow``).
struct EtcdRetentionTests {
    @Test func theWorstCaseBytesKeptAreWhatHAStates() throws {
        let identity = StoreIdentity.make()
        let longest = try #require(longestNames(count: 1, characters: 100, scalars: 400).first)
        let row = IndexedCountry(Country(name: longest, visited: true), at: Limits.maximumCountries - 1)
        let largestEvent = Event(seq: .max, kind: .removed(row), store: identity).encoded().count
        #expect(largestEvent <= 1_800, "a row's event: \(largestEvent) bytes")
        let marker = EtcdResetMarker(seq: .max, store: identity).encoded.count
        #expect(marker <= 100)
        // The largest list: 10,000 names of 100 characters of 4 scalars of 4 bytes each.
        let rows = longestNames(count: Limits.maximumCountries, characters: 100, scalars: 400)
            .map { Country(name: $0, visited: true) }
        let snapshot = Event(seq: .max, kind: .reset(CountriesState(countries: rows).rows), store: identity)
            .encoded().count
        #expect(snapshot <= 16_500_000, "the largest snapshot: \(snapshot) bytes")
        let chunks = (snapshot + EtcdBlob.chunkBytes - 1) / EtcdBlob.chunkBytes
        // A trim deletes whole entries of the log: the one holding the oldest event to keep
        // stays, with up to an entry's width less one before it.
        let events = (Limits.retainedEvents + EtcdLayout.eventsPerEntry - 1) * largestEvent
        let total = events + Limits.maximumRequestIDBytesKept + 3 * snapshot
        print(
            "retention: event \(largestEvent) B, marker \(marker) B, snapshot \(snapshot) B in \(chunks) chunks; events \(events) B + ids \(Limits.maximumRequestIDBytesKept) B + 2 snapshots and the seed \(3 * snapshot) B = \(total) B"
        )
    }
}
