import Foundation
import TestSupport
import Testing

@testable import CountriesCore

/// ``JSONWriter`` must write the very bytes JSONEncoder wrote (sorted keys, slashes unescaped).
@Suite struct JSONWriterTests {
    private static let names = [
        "France", "", "a/b", "Côte d’Ivoire", "quote \" back \\ slash",
        "\u{0}\u{1}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{1F}",
        "\u{7F}\u{2028}\u{2029}😀", "e\u{301}", String(repeating: "x", count: 400),
    ]

    private static func row(_ random: inout SplitMix64) -> IndexedCountry {
        let indices = [0, 1, 9, 10, 249, 9_999, -1, Int.max, Int.min, Int(Int32.max)]
        return IndexedCountry(
            index: Bool.random(using: &random)
                ? indices.randomElement(using: &random)! : Int.random(in: 0...100_000, using: &random),
            name: names.randomElement(using: &random)!, visited: Bool.random(using: &random))
    }

    private static func event(_ random: inout SplitMix64) -> Event {
        let seqs: [UInt64] = [0, 1, 10, 12_345, UInt64(Int64.max), .max]
        let seq = seqs.randomElement(using: &random)!
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return Event(seq: seq, kind: .changed(row(&random)))
        case 1: return Event(seq: seq, kind: .added(row(&random)))
        case 2: return Event(seq: seq, kind: .removed(row(&random)))
        default:
            return Event(
                seq: seq, kind: .reset((0..<Int.random(in: 0...3, using: &random)).map { _ in row(&random) }))
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
                if Int.random(in: 0..<3, using: &random) == 0 {
                    reply.count = [0, 8, -3].randomElement(using: &random)!
                }
                if Int.random(in: 0..<3, using: &random) == 0 { reply.country = Self.row(&random) }
                if Int.random(in: 0..<3, using: &random) == 0 {
                    reply.countries = (0..<Int.random(in: 0...4, using: &random)).map { _ in Self.row(&random)
                    }
                }
                if Int.random(in: 0..<3, using: &random) == 0 {
                    reply.events = (0..<Int.random(in: 0...3, using: &random)).map { _ in Self.event(&random)
                    }
                }
                if Int.random(in: 0..<4, using: &random) == 0 { reply.more = Bool.random(using: &random) }
                if Int.random(in: 0..<10, using: &random) == 0 {
                    reply.error = .init(code: "x", message: "/")
                }
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

/// Reply.decode and Event.decode (JSONParser-based) against JSONDecoder.
@Suite struct WireDecodingTests {
    private func agree<T: Decodable & Equatable>(
        _ type: T.Type, _ bytes: [UInt8], _ decode: (Data) throws -> T
    ) {
        let fast = try? decode(Data(bytes))
        let reference = try? WireJSON.decoder.decode(T.self, from: Data(bytes))
        if fast == nil, reference != nil {
            // JSONDecoder does not check the values of keys it skips ({"x":08}); that is not JSON.
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)) == nil,
                "\(String(decoding: bytes, as: UTF8.self))")
            return
        }
        #expect(fast == reference, "\(String(decoding: bytes, as: UTF8.self))")
    }

    @Test func mutatedRepliesAndEventsDecodeAsJSONDecoderDoes() {
        let seeds = [
            #"{"countries":[{"index":0,"name":"A","visited":false},{"index":1,"name":"B\n","visited":true}],"ok":true,"seq":5}"#,
            #"{"country":{"index":2,"name":"France","visited":true},"ok":true,"seq":2}"#,
            #"{"error":{"code":"not_found","message":"no \"x\""},"ok":false}"#,
            #"{"count":8,"ok":true,"seq":null,"extra":[1]}"#,
            #"{"events":[{"country":{"index":0,"name":"A","visited":true},"seq":2,"topic":"country.changed"}],"ok":true,"seq":3}"#,
            #"{"country":{"index":3,"name":"Côte","visited":true},"seq":42,"topic":"country.added"}"#,
            #"{"countries":[],"seq":18446744073709551615,"topic":"countries.reset"}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[],:"-.e019tfnul ax"#.utf8)
        var random = SplitMix64(seed: 8)
        for round in 0..<6_000 {
            var bytes = seeds.randomElement(using: &random)!
            if round > 100 {
                for _ in 0..<Int.random(in: 1...2, using: &random) {
                    let at = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: bytes[at] = alphabet.randomElement(using: &random)!
                    case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                    default: bytes.remove(at: at)
                    }
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if text.range(of: #",\s*[\]}]"#, options: .regularExpression) != nil { continue }  // not JSON
            // A fraction beyond Double's precision: JSONDecoder reads it exactly, JSONParser as a Double.
            if text.range(of: #"[0-9]{16,}\."#, options: .regularExpression) != nil { continue }
            agree(Reply.self, bytes, Reply.decode)
            agree(Event.self, bytes, Event.decode)
        }
    }
}
