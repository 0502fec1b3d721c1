import CountriesCore
import Foundation
import TestSupport
import Testing

/// What a relay forwards: the protocol's shape, and the largest event of each topic worked out
/// from the limits (checked against events as large as the limits allow, made by the writer).
@Suite struct EventShapeTests {
    static let store = String(repeating: "a", count: Limits.storeIdentityBytes)

    /// Rows of names as long, in bytes, as names can be (each validated as `add` would).
    static func longestRows(_ count: Int) throws -> [IndexedCountry] {
        let names = longestNames(
            count: count, characters: Limits.maximumNameLength, scalars: Limits.maximumNameScalars)
        return try names.enumerated().map { index, name in
            IndexedCountry(index: index, name: try CountryName.validate(name), visited: false)
        }
    }

    @Test func aNameTakesAtMostFourBytesPerScalar() throws {
        let row = try Self.longestRows(1)[0]
        #expect(row.name.count == Limits.maximumNameLength)
        #expect(row.name.unicodeScalars.count == Limits.maximumNameScalars)
        #expect(row.name.utf8.count == Limits.maximumNameScalars * 4)
    }

    @Test func theLargestResetFitsItsBoundAndNearlyFillsIt() throws {
        let rows = try Self.longestRows(Limits.maximumCountries)
        let body = Event(seq: .max, kind: .reset(rows), store: Self.store).encoded()
        let maximum = EventShape.maximumBodyBytes(.countriesReset)
        #expect(body.count <= maximum)
        // The bound takes every index as long as the last one: 3 bytes over at most per row.
        #expect(maximum - body.count < 3 * Limits.maximumCountries)
        #expect(EventShape.maximumBodyBytes == maximum)
        print("largest reset: \(body.count) bytes, bound \(maximum)")
        #expect(Self.check(topic: .countriesReset, body) == .success(.countriesReset))
    }

    @Test(arguments: [Topic.countryChanged, .countryAdded, .countryRemoved])
    func theLargestRowEventFitsItsBound(topic: Topic) throws {
        let row = IndexedCountry(
            index: Limits.maximumCountries - 1, name: try Self.longestRows(1)[0].name, visited: false)
        let kind: Event.Kind =
            switch topic {
            case .countryChanged: .changed(row)
            case .countryAdded: .added(row)
            default: .removed(row)
            }
        let body = Event(seq: .max, kind: kind, store: Self.store).encoded()
        #expect(body.count == EventShape.maximumBodyBytes(topic))
        #expect(Self.check(topic: topic, body) == .success(topic))
        #expect(
            Self.check(topic: topic, body + Data(" ".utf8))
                == .failure(.tooLarge(topic, bytes: body.count + 1, maximum: body.count)))
    }

    @Test func theLargestHeartbeatFitsItsBound() {
        let body = Heartbeat(seq: .max, store: Self.store).encoded()
        #expect(body.count == EventShape.maximumBodyBytes(.heartbeat))
        #expect(Self.check(topic: .heartbeat, body) == .success(.heartbeat))
    }

    @Test func messagesOfAnotherShapeAreTold() {
        let event = Event(seq: 1, kind: .changed(IndexedCountry(index: 0, name: "France", visited: true)))
        let body = event.encoded()
        #expect(Self.check([Data("country.changed".utf8)]) == .failure(.frameCount(1)))
        #expect(
            Self.check([Data("country.changed".utf8), body, Data()]) == .failure(.frameCount(3)))
        #expect(Self.check(topic: "country.change", body) == .failure(.unknownTopic(bytes: 14)))
        #expect(Self.check(topic: "", body) == .failure(.unknownTopic(bytes: 0)))
        let huge = Data(repeating: UInt8(ascii: "c"), count: 8 << 20)
        #expect(Self.check([huge, body]) == .failure(.unknownTopic(bytes: 8 << 20)))
        #expect(
            Self.check(topic: .countriesReset, Data(repeating: 0, count: 1_000))
                == .failure(.notAnObject(.countriesReset)))
        #expect(Self.check(topic: .heartbeat, Data()) == .failure(.notAnObject(.heartbeat)))
        #expect(
            Self.check(topic: .countryChanged, Data(" \(String(decoding: body, as: UTF8.self))\n".utf8))
                == .success(.countryChanged))
    }

    private static func check(topic: Topic, _ body: Data) -> Result<Topic, EventShape.Flaw> {
        check(topic: topic.rawValue, body)
    }

    private static func check(topic: String, _ body: Data) -> Result<Topic, EventShape.Flaw> {
        check([Data(topic.utf8), body])
    }

    private static func check(_ frames: [Data]) -> Result<Topic, EventShape.Flaw> {
        func with(_ index: Int, _ buffers: [UnsafeRawBufferPointer]) -> Result<Topic, EventShape.Flaw> {
            guard index < frames.count else { return EventShape.check(buffers) }
            return frames[index].withUnsafeBytes { with(index + 1, buffers + [$0]) }
        }
        return with(0, [])
    }
}
