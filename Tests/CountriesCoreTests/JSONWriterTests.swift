import Foundation
import JSON
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
            for store in [nil, "7f3a", "a/\"b"] {
                let beat = Heartbeat(seq: seq, store: store)
                #expect(text(beat.encoded()) == text(try WireJSON.encoder.encode(beat)))
            }
        }
    }

    static func status(_ random: inout SplitMix64) -> ServiceStatus {
        // Each field present three times in four.
        func some(_ random: inout SplitMix64) -> Bool { Int.random(in: 0..<4, using: &random) > 0 }
        let uptimes: [UInt64] = [0, 1, 10, 100, 999, 1_000, 1_500, 2_000, 3_725_125, 1_000_000_000_000_000]
        var status = ServiceStatus()
        if some(&random) { status.version = names.randomElement(using: &random)! }
        if some(&random) {
            status.uptimeMilliseconds =
                Bool.random(using: &random)
                ? uptimes.randomElement(using: &random)! : UInt64.random(in: 0..<1 << 40, using: &random)
        }
        if some(&random) { status.visited = Int.random(in: -1...10_000, using: &random) }
        if some(&random) { status.commandsServed = [0, 1, .max].randomElement(using: &random)! }
        if some(&random) { status.commandsRefused = Int.random(in: 0...1_000, using: &random) }
        if some(&random) {
            status.storePath = [":memory:", "/var/lib/countries/countries.db", "a\"b"].randomElement(
                using: &random)!
        }
        if some(&random) { status.storeBytes = Int.random(in: 0...1 << 40, using: &random) }
        if some(&random) { status.historyFrom = [0, 1, UInt64(Int64.max)].randomElement(using: &random)! }
        if some(&random) { status.subscribers = Int.random(in: 0...3, using: &random) }
        if some(&random) {
            status.endpoints = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                names.randomElement(using: &random)!
            }
        }
        return status
    }

    @Test func statusRepliesMatchJSONEncoder() throws {
        var random = SplitMix64(seed: 5)
        for _ in 0..<2_000 {
            var reply = Reply(
                seq: [nil, 0, 42].randomElement(using: &random)!, count: Int.random(in: 0...300))
            reply.store = Bool.random(using: &random) ? "0123456789abcdef0123456789abcdef" : nil
            reply.status = Self.status(&random)
            #expect(text(reply.encoded()) == text(reply.encodedWithJSONEncoder()))
            let decoded = try Reply.decode(reply.encoded())
            #expect(decoded == reply || reply.status == ServiceStatus(), "\(text(reply.encoded()))")
        }
        var reply = Reply(seq: 1, count: 2)
        reply.status = ServiceStatus()
        reply.status?.uptimeMilliseconds = 2_000
        #expect(text(reply.encoded()) == #"{"count":2,"ok":true,"seq":1,"uptime_seconds":2}"#)
        reply.status?.uptimeMilliseconds = 1
        #expect(text(reply.encoded()) == #"{"count":2,"ok":true,"seq":1,"uptime_seconds":0.001}"#)
    }

    @Test func uptimeIsWrittenAsJSONEncoderWroteItsSeconds() {
        var random = SplitMix64(seed: 6)
        var milliseconds: [UInt64] = (0..<2_000).map { _ in
            UInt64.random(in: 0..<1_000_000_000_000_000, using: &random)
        }
        milliseconds += (0..<2_000).map { _ in UInt64.random(in: 0..<100_000_000, using: &random) }
        milliseconds += [0, 1, 9, 10, 11, 100, 101, 110, 999, 1_000, 1_001, 1_010, 1_100]
        for value in milliseconds {
            var writer = JSONWriter()
            writer.seconds(milliseconds: value)
            let reference = (try? WireJSON.encoder.encode(Double(value) / 1000)) ?? Data()
            #expect(text(writer.finish()) == text(reference), "\(value) ms")
        }
    }

    /// Growing from the smallest room keeps every byte written before, and ``JSONWriter/finish()``
    /// hands over exactly the bytes written.
    @Test func growingKeepsEveryByte() throws {
        var first = JSONWriter(capacity: 1)
        first.byte(UInt8(ascii: "["))
        first.integer(-12)
        first.raw(",null,")
        first.unsigned(.max)
        first.byte(UInt8(ascii: "]"))
        #expect(first.count == 31)
        #expect(text(first.finish()) == "[-12,null,18446744073709551615]")
        for name in Self.names {
            var writer = JSONWriter(capacity: 1)
            let long = String(repeating: name + "/", count: 300)
            writer.string(long)
            let bytes = writer.bytes
            let data = writer.finish()
            #expect(text(data) == text(try WireJSON.encoder.encode(long)), "\(name)")
            #expect(bytes == Array(data))
        }
    }

    /// `encode(_:capacity:as:_:)` writes on a buffer it lends when the guess is small, and moves to
    /// memory of its own once the bytes outgrow it: every byte kept, at every size around the
    /// lent buffer's end and past the largest it lends.
    @Test func encodingOnALentBufferKeepsEveryByteWhenItGrows() throws {
        for capacity in [1, 16, 64, 192, JSONWriter.largestOnStack, JSONWriter.largestOnStack + 1] {
            for length in [0, 1, 14, 15, 16, 17, 63, 64, 65, 190, 191, 192, 193, 1_021, 1_022, 1_023, 5_000] {
                let long =
                    String(repeating: "é/\"", count: length / 3) + String(repeating: "x", count: length % 3)
                let data = JSONWriter.encode(long, capacity: capacity) { $0.string($1) }
                #expect(
                    text(data) == text(try WireJSON.encoder.encode(long)),
                    "capacity \(capacity), length \(length)")
            }
        }
        let event = Event(
            seq: 7,
            kind: .reset((0..<500).map { IndexedCountry(index: $0, name: "Country \($0)", visited: true) }))
        #expect(
            text(event.encoded()) == text(event.encodedWithJSONEncoder()),
            "a reset of 500 rows outgrows any guess")
    }

    /// Base64 as Foundation writes it, at every length around each padding case and from a
    /// slice whose bytes do not start at a word boundary, with the writer growing under it.
    @Test func base64StringsAreFoundationsBase64() {
        var random = SplitMix64(seed: 42)
        for length in Array(0...70) + [255, 256, 257, 3_000] {
            let bytes = (0..<length + 1).map { _ in UInt8.random(in: 0...255, using: &random) }
            let data = Data(bytes.dropFirst())
            var writer = JSONWriter(capacity: 1)
            writer.byte(UInt8(ascii: "["))
            bytes.withUnsafeBytes { writer.base64String(UnsafeRawBufferPointer(rebasing: $0.dropFirst())) }
            writer.byte(UInt8(ascii: "]"))
            #expect(text(writer.finish()) == "[\"" + data.base64EncodedString() + "\"]", "\(length) bytes")
        }
        var writer = JSONWriter()
        writer.base64String(utf8: "Côte d’Ivoire/é")
        #expect(text(writer.finish()) == "\"" + Data("Côte d’Ivoire/é".utf8).base64EncodedString() + "\"")
    }

    /// Strings are scanned eight bytes at a time: a byte that needs an escape is found at every
    /// offset in and around a word, next to every other byte value.
    @Test func everyByteThatNeedsAnEscapeIsFoundAtEveryOffset() throws {
        let plain = Array("abcdefghijklmnopqrstuvwxy".utf8)  // 25 bytes: three words and one
        for special in [UInt8](0..<0x20) + [0x22, 0x5C, 0x7F] {
            for offset in plain.indices {
                var bytes = plain
                bytes[offset] = special
                let string = String(decoding: bytes, as: UTF8.self)
                var writer = JSONWriter(capacity: 1)
                writer.string(string)
                #expect(
                    text(writer.finish()) == text(try WireJSON.encoder.encode(string)),
                    "byte \(special) at \(offset)")
            }
        }
        for high in UInt8(0x20)...0x7E {
            // Bytes that need none, in every word position, with multi-byte UTF-8 around them.
            let string = String(repeating: "é", count: 3) + String(UnicodeScalar(high)) + "😀xyz"
            var writer = JSONWriter()
            writer.string(string)
            #expect(text(writer.finish()) == text(try WireJSON.encoder.encode(string)), "byte \(high)")
        }
    }

    @Test func everyStatusPropertyIsAField() {
        // A property without a row in ServiceStatus.fields would never reach the wire.
        let properties = Mirror(reflecting: ServiceStatus()).children.compactMap(\.label)
        #expect(properties.count == ServiceStatus.fields.count)
        #expect(Set(ServiceStatus.fields.map(\.key)).count == ServiceStatus.fields.count)
        var status = ServiceStatus()
        for field in ServiceStatus.fields {
            let value: ServiceStatus.Value
            switch field.kind {
            case .text: value = .text("x")
            case .count: value = .count(1)
            case .seq: value = .seq(1)
            case .milliseconds: value = .milliseconds(1)
            case .list: value = .list(["x"])
            }
            field.set(&status, value)
            #expect(field.get(status) == value, "\(field.key)")
        }
        // Every property is set now: each field sets its own.
        #expect(Mirror(reflecting: status).children.allSatisfy { "\($0.value)" != "nil" })
    }

    @Test func requestsMatchJSONEncoder() throws {
        var random = SplitMix64(seed: 7)
        let references: [CountryReference] = [
            .index(0), .index(-1), .index(.max), .index(.min), .name("France"), .name("a/b\"\u{1}"),
            .name(""),
        ]
        for _ in 0..<2_000 {
            let reference = references.randomElement(using: &random)!
            let seq = [nil, 0, 7, UInt64.max].randomElement(using: &random)!
            let commands: [Command] = [
                .query(.list), .query(.count), .query(.get(reference)), .status, .history(since: seq ?? 1),
                .change(.toggle(reference, ifSeq: seq)),
                .change(.set(reference, visited: seq == 7, ifSeq: seq)),
                .change(.add(name: Self.names.randomElement(using: &random)!, visited: seq == 0)),
                .change(.remove(reference)), .change(.reset),
            ]
            let request = Request(
                id: [nil, "r1", "x/y\"z\\"].randomElement(using: &random)!,
                command: commands.randomElement(using: &random)!,
                ifStore: [nil, "0123456789abcdef0123456789abcdef"].randomElement(using: &random)!)
            #expect(text(request.encoded()) == text(request.encodedWithJSONEncoder()))
        }
    }
}

/// Reply.decode, Event.decode and Heartbeat.decode (JSONParser-based) against JSONDecoder.
@Suite struct WireDecodingTests {
    private func agree<T: Decodable & Equatable>(
        _ type: T.Type, _ bytes: [UInt8], _ decode: (Data) throws -> T
    ) {
        let fast = try? decode(Data(bytes))
        let reference = try? WireJSON.decoder.decode(T.self, from: Data(bytes))
        if fast == nil, reference != nil {
            // A seq past Int64.max is refused on purpose: no store keeps one
            // (WireDecoding.seqValue).
            if Self.holdsAnIntegerPastInt64(bytes) { return }
            // JSONDecoder does not check the values of keys it skips ({"x":08}); that is not JSON.
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)) == nil,
                "\(String(decoding: bytes, as: UTF8.self))")
            return
        }
        #expect(fast == reference, "\(String(decoding: bytes, as: UTF8.self))")
    }

    private static func holdsAnIntegerPastInt64(_ bytes: [UInt8]) -> Bool {
        String(decoding: bytes, as: UTF8.self).split { !$0.isNumber }.contains {
            UInt64($0).map { $0 > UInt64(Int64.max) } ?? ($0.count >= 19)
        }
    }

    @Test func mutatedRepliesAndEventsDecodeAsJSONDecoderDoes() {
        let seeds = [
            #"{"countries":[{"index":0,"name":"A","visited":false},{"index":1,"name":"B\n","visited":true}],"ok":true,"seq":5}"#,
            #"{"country":{"index":2,"name":"France","visited":true},"ok":true,"seq":2}"#,
            #"{"error":{"code":"not_found","message":"no \"x\""},"ok":false}"#,
            #"{"count":8,"ok":true,"seq":null,"extra":[1]}"#,
            #"{"events":[{"country":{"index":0,"name":"A","visited":true},"seq":2,"topic":"country.changed"}],"ok":true,"seq":3}"#,
            #"{"country":{"index":3,"name":"Côte","visited":true},"seq":42,"topic":"country.added"}"#,
            #"{"countries":[],"seq":9223372036854775807,"topic":"countries.reset"}"#,
            #"{"seq":12,"store":"7f3a","topic":"heartbeat"}"#,
            #"{"commands_refused":3,"commands_served":10,"count":8,"endpoints":["tcp://a:1","ipc:///b"],"history_from":1,"ok":true,"seq":9,"store_bytes":4096,"store_path":"/x","subscribers":2,"uptime_seconds":1.5,"version":"0.1.0","visited":2}"#,
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
            // A fraction beyond Double's precision: JSONDecoder reads it exactly, JSONParser as a
            // Double.
            if text.range(of: #"[0-9]{16,}\."#, options: .regularExpression) != nil { continue }
            agree(Reply.self, bytes, Reply.decode)
            agree(Event.self, bytes, Event.decode)
            agree(Heartbeat.self, bytes, Heartbeat.decode)
        }
    }

    /// Every decoder is the one parser now, with its strictness: no frame nests deeper than
    /// ``Limits/maximumNesting`` and no key comes twice (JSONDecoder took 512 levels and kept
    /// one of the values).
    @Test(arguments: [
        #"{"ok":true,"seq":1,"x":"# + String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
            + "}",
        #"{"seq":1,"topic":"heartbeat","x":"# + String(repeating: "[", count: 16)
            + String(repeating: "]", count: 16)
            + "}",
        #"{"ok":true,"seq":1,"seq":2}"#, #"{"ok":true,"version":"a","version":"b"}"#,
        #"{"seq":1,"seq":2,"topic":"heartbeat"}"#,
        #"{"country":{"index":0,"name":"A","visited":true},"seq":1,"topic":"country.added","topic":"country.removed"}"#,
    ])
    func framesTooDeepOrWithADuplicateKeyAreRefused(json: String) {
        let data = Data(json.utf8)
        #expect(throws: WireDecodingError.self) { try Reply.decode(data) }
        #expect(throws: WireDecodingError.self) { try Event.decode(data) }
        #expect(throws: WireDecodingError.self) { try Heartbeat.decode(data) }
    }

    @Test func framesAtTheDepthLimitAreRead() throws {
        let nested = String(repeating: "[", count: 15) + String(repeating: "]", count: 15)
        #expect(try Reply.decode(Data(#"{"ok":true,"x":\#(nested)}"#.utf8)) == Reply())
        #expect(
            try Heartbeat.decode(Data(#"{"seq":1,"topic":"heartbeat","x":\#(nested)}"#.utf8))
                == Heartbeat(seq: 1))
    }
}
