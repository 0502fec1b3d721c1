import Foundation
import Testing

@testable import CountriesCore

/// ``JSONWriter`` must write the very bytes JSONEncoder wrote (sorted keys, slashes unescaped).
@Suite struct JSONWriterTests {
    private static let names = [
        "France", "", "a/b", "Côte d’Ivoire", "quote \" back \\ slash", "\u{0}\u{1}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{1F}",
        "\u{7F}\u{2028}\u{2029}😀", "e\u{301}", String(repeating: "x", count: 400),
    ]

    private static func row(_ random: inout SplitMix64) -> IndexedCountry {
        let indices = [0, 1, 9, 10, 249, 9_999, -1, Int.max, Int.min, Int(Int32.max)]
        return IndexedCountry(
            index: Bool.random(using: &random) ? indices.randomElement(using: &random)! : Int.random(in: 0...100_000, using: &random),
            name: names.randomElement(using: &random)!, visited: Bool.random(using: &random))
    }

    private static func event(_ random: inout SplitMix64) -> Event {
        let seqs: [UInt64] = [0, 1, 10, 12_345, UInt64(Int64.max), .max]
        let seq = seqs.randomElement(using: &random)!
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return Event(seq: seq, kind: .changed(row(&random)))
        case 1: return Event(seq: seq, kind: .added(row(&random)))
        case 2: return Event(seq: seq, kind: .removed(row(&random)))
        default: return Event(seq: seq, kind: .reset((0..<Int.random(in: 0...3, using: &random)).map { _ in row(&random) }))
        }
    }

    @Test func eventsMatchJSONEncoder() {
        var random = SplitMix64(seed: 3)
        for _ in 0..<2_000 {
            let event = Self.event(&random)
            #expect(text(event.encoded()) == text(event.encodedWithJSONEncoder()))
        }
    }

    @Test func repliesMatchJSONEncoder() {
        var random = SplitMix64(seed: 4)
        for _ in 0..<2_000 {
            var reply: Reply
            if Int.random(in: 0..<5, using: &random) == 0 {
                let code = CountriesError.Code.allCases.randomElement(using: &random)!
                reply = Reply(error: CountriesError(code, Self.names.randomElement(using: &random)!))
            } else {
                reply = Reply()
                if Bool.random(using: &random) { reply.seq = [0, 7, .max].randomElement(using: &random)! }
                if Int.random(in: 0..<3, using: &random) == 0 { reply.count = [0, 8, -3].randomElement(using: &random)! }
                if Int.random(in: 0..<3, using: &random) == 0 { reply.country = Self.row(&random) }
                if Int.random(in: 0..<3, using: &random) == 0 {
                    reply.countries = (0..<Int.random(in: 0...4, using: &random)).map { _ in Self.row(&random) }
                }
                if Int.random(in: 0..<3, using: &random) == 0 {
                    reply.events = (0..<Int.random(in: 0...3, using: &random)).map { _ in Self.event(&random) }
                }
                if Int.random(in: 0..<10, using: &random) == 0 { reply.error = .init(code: "x", message: "/") }
                if Int.random(in: 0..<10, using: &random) == 0 { reply.ok = false }
            }
            #expect(text(reply.encoded()) == text(reply.encodedWithJSONEncoder()))
        }
    }

    @Test func heartbeatMatchesJSONEncoder() throws {
        for seq: UInt64 in [0, 9, 10, .max] {
            let beat = Heartbeat(seq: seq)
            #expect(text(beat.encoded()) == text(try WireJSON.encoder.encode(beat)))
        }
    }

    @Test func statusRepliesStillGoThroughJSONEncoder() {
        var reply = Reply(seq: 1, count: 2)
        reply.uptimeSeconds = 2.0
        reply.endpoints = ["tcp://127.0.0.1:5555"]
        #expect(text(reply.encoded()) == text(reply.encodedWithJSONEncoder()))
        #expect(text(reply.encoded()).contains(#""uptime_seconds":2"#))
    }
}
