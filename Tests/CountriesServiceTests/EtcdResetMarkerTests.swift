import CountriesCore
import Etcd
import Foundation
import TestSupport
import Testing

@testable import CountriesReplication
@testable import CountriesService
@testable import CountriesStore

/// A reset is kept in etcd as a small marker (``EtcdResetMarker``) and read back, by every
/// reader, as the bytes one encoder makes of the reset to the seed; its remembered reply is
/// made again byte for byte. Values kept in full (stores from before) are read as they are.
struct EtcdResetMarkerTests {
    private let layout = EtcdLayout(prefix: "/m/")
    private let identity = StoreIdentity.make()

    /// The largest seed: 10,000 names of 100 four-byte characters.
    private var seed: [Country] {
        longestNames(count: 10_000, characters: 100, scalars: 100).map { Country(name: $0, visited: false) }
    }

    /// A reset as the stager makes it, with its reply.
    private func reset(after seq: UInt64, seed: [Country]) throws -> (Event, [UInt8]) {
        var state = CountriesState(countries: [Country(name: "Narnia", visited: true)], seq: seq)
        let stager = BatchStager(identity: identity, seed: seed)
        let staged = stager.stage(.reset, id: "r", ifStore: nil, envelope: [], on: &state)
        return (try #require(staged.event), staged.body)
    }

    private func kv(_ key: String, _ value: Data) -> EtcdKeyValue {
        EtcdKeyValue(key: key, value: value, createRevision: 1, modRevision: 1, version: 1)
    }

    @Test func aResetIsKeptAsAMarkerAndReadAsTheSameBytes() throws {
        let seed = self.seed
        let rows = CountriesState(countries: seed).rows
        let (event, _) = try reset(after: 199, seed: seed)
        let marker = try #require(EtcdResetMarker(for: event, seedRows: rows))
        #expect(marker.encoded.count < 100, "the marker, not the list: \(marker.encoded.count) bytes")
        #expect(EtcdResetMarker(marker.encoded) == marker)
        let entries = try #require(layout.entries(in: kv(layout.event(200), marker.encoded), seedRows: rows))
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.event == event)
        #expect(entry.body == event.encoded(), "every replica publishes what one encoder makes")
        #expect(entry.body.count > 4_000_000)
        // Under another seq's key it is not that key's event.
        #expect(layout.entries(in: kv(layout.event(201), marker.encoded), seedRows: rows) == nil)
        // A reset to anything but the seed is not a marker's.
        #expect(EtcdResetMarker(for: event, seedRows: Array(rows.dropLast())) == nil)
    }

    @Test func aRememberedResetReplyIsMadeAgainByteForByte() throws {
        let seed = SeedList.standard
        let rows = CountriesState(countries: seed).rows
        let (event, reply) = try reset(after: 4, seed: seed)
        let marker = try #require(EtcdResetMarker(for: event, seedRows: rows))
        #expect(Array(marker.reply(seedRows: rows)) == reply)
        let remembered = RememberedRequest(id: "r", request: Array(#"{"op":"reset"}"#.utf8), reply: reply)
        let stored = EtcdLayout.encode(remembered, reference: marker)
        #expect(stored.count < 150)
        #expect(EtcdLayout.decodeRequest(id: "r", stored, seedRows: rows) == remembered)
    }

    @Test func valuesKeptInFullAreReadAsTheyAre() throws {
        let rows = CountriesState(countries: SeedList.standard).rows
        let (event, reply) = try reset(after: 6, seed: SeedList.standard)
        let entries = try #require(layout.entries(in: kv(layout.event(7), event.encoded()), seedRows: []))
        #expect(entries.count == 1 && entries[0].event == event && entries[0].body == event.encoded())
        let remembered = RememberedRequest(id: "r", request: nil, reply: reply)
        #expect(
            EtcdLayout.decodeRequest(id: "r", EtcdLayout.encode(remembered), seedRows: rows) == remembered)
        // Neither an event nor a reply is taken for a marker.
        #expect(EtcdResetMarker(event.encoded()) == nil && EtcdResetMarker(Data(reply)) == nil)
        #expect(EtcdResetMarker(Data(#"{"reset":"to the seed","seq":7,"store":"nothex"}"#.utf8)) == nil)
    }
}
