import Foundation
import JSON
import TestSupport
import Testing

@testable import CountriesCore

/// ``JSONParser`` against the decoder it replaced (JSONDecoder into ``JSONValue``): the same
/// values, the same refusals, except where the old decoder accepted what is not JSON.
@Suite struct JSONParserTests {
    private func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBytes { try? JSONParser.parse($0) }
    }

    private func parse(_ text: String) -> JSONValue? { parse(Array(text.utf8)) }

    private func reference(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    private static let corpus: [String] = [
        "{}", "[]", " 1 ", "0", "-0", "-0.0", "1.0", "1e2", "1E+2", "2.0e0", "1.5e-3", "4e18",
        "1.0e19",
        "1.5", "-2.5", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "18446744073709551615", "18446744073709551616", "-9223372036854775809", "100000000000000000000000",
        "1e300", "1e400", "-1e400", "01", "-01", "1.", ".5", "-", "+1", "1e", "1e+", "0x10", "NaN",
        "Infinity",
        "true", "false", "null", "tru", "nulll", "True", #""""#, #""a""#, #""\/""#, #""\"\\\b\f\n\r\t""#,
        #""\u0000""#, #""\u00e9\u2019""#, #""\ud83d\ude00""#, #""\ud800""#, #""\udc00x""#, #""\ud800\u0041""#,
        #""\x""#, #""\u12""#, #""\u12G4""#, "\"a\tb\"", "\"\u{7F}\"", "\"é😀\"", #""abc"#,
        #"{"a":{"b":[1,2,{"c":null}]}}"#, #"{"a" : [ 1 , 2 ] , "b" : { } }"#,
        #"{"a":1 "b":2}"#,
        #"{"a"}"#, #"{"a":}"#, #"{1:2}"#, #"{'a':1}"#, #"[1 2]"#, #"[,1]"#, #"[1,,2]"#, "{\"a\":1}\n",
        "\u{FEFF}{}", "{} {}", "{}x", "[", "]", "{", "}", "",
        String(repeating: "[", count: 16) + String(repeating: "]", count: 16),
        String(repeating: "{\"a\":", count: 16) + "1" + String(repeating: "}", count: 16),
        String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
    ]

    @Test(arguments: corpus)
    func agreesWithJSONDecoder(text: String) {
        #expect(parse(text) == reference(Array(text.utf8)))
    }

    /// Whether `bytes` is refused for a key given twice in one object.
    private func hasDuplicateKey(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            do {
                _ = try JSONParser.parse(buffer)
                return false
            } catch {
                if case .duplicateKey = error as? JSONParser.Failure { return true }
                return false
            }
        }
    }

    @Test func aKeyGivenTwiceIsRefused() {
        // JSONDecoder keeps one of them; parsers differ on which, so a request must not have it.
        #expect(parse(#"{"a":1,"a":2}"#) == nil)
        #expect(parse(#"{"a":1,"b":{"c":1,"c":1}}"#) == nil)
        #expect(
            parse(#"[{"a":1},{"a":2}]"#)
                == .array([.object(["a": .integer(1)]), .object(["a": .integer(2)])]))
        #expect(parse(#"{"a":1,"b":{"a":2}}"#) != nil)
        #expect(parse(#"{"a":1,"\u0061":2}"#) == nil, "the same key, escaped")
        #expect(hasDuplicateKey(Array(#"{"op":"list","op":"reset"}"#.utf8)))
        #expect(!hasDuplicateKey(Array(#"{"op":"list""#.utf8)))
    }

    /// A number is an integer only when its decimal value is one exactly: rounding it through a
    /// `Double` first made `0.99999999999999999999` an index of 1 and `1e-400` one of 0.
    @Test func numbersAreIntegersOnlyWhenTheyAreExactly() {
        #expect(parse("0.99999999999999999999") == .number(1))
        #expect(parse("1.0000000000000000001") == .number(1))
        #expect(parse("1e-400") == .number(0))
        #expect(parse("-1e-400") == .number(-0.0))
        #expect(parse("9.2233720368547758075e18") == .number(9.2233720368547758075e18))
        #expect(parse("12345678901234567890123e-5") == .number(12345678901234567890123e-5))
        #expect(parse("1.0") == .integer(1))
        #expect(parse("100e-2") == .integer(1))
        #expect(parse("-0.0e-5") == .integer(0))
        #expect(parse("0e99999999999999999999") == .integer(0))
        #expect(parse("1e19") == .unsigned(10_000_000_000_000_000_000))
        #expect(parse("1.8446744073709551615e19") == .unsigned(.max))
        #expect(parse("-9.223372036854775808e18") == .integer(.min))
        #expect(parse("1.8446744073709551616e19") == .number(1.8446744073709551616e19))
        #expect(parse("-9.223372036854775809e18") == .number(-9.223372036854775809e18))
        #expect(parse("1e99999999999999999999") == nil, "out of Double's range, as before")
    }

    /// One depth limit, counted while parsing: JSONDecoder took 512 levels, the parser takes
    /// ``Limits/maximumNesting`` (the outermost array or object counting as 1) and refuses more
    /// as it reaches them, so a deep frame costs no more than a shallow one of its size.
    @Test func nestingIsBoundedWhileParsing() {
        func failure(_ text: String) -> JSONParser.Failure? {
            Array(text.utf8).withUnsafeBytes { buffer in
                do {
                    _ = try JSONParser.parse(buffer)
                    return nil
                } catch {
                    return error as? JSONParser.Failure
                }
            }
        }
        let limit = Limits.maximumNesting
        #expect(parse(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)) != nil)
        #expect(
            failure(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
                == .tooDeep)
        #expect(
            failure(
                String(repeating: "{\"a\":", count: limit + 1) + "1"
                    + String(repeating: "}", count: limit + 1)) == .tooDeep)
        // Unclosed, and a megabyte deep: refused at the limit, not read to the end.
        #expect(failure(String(repeating: "[", count: 1 << 20)) == .tooDeep)
        #expect(failure("[" + String(repeating: "[", count: limit) + "1,") == .tooDeep)
        #expect(failure(#"["[[[[[[[[[[[[[[[[[[[[[[[["]"#) == nil, "brackets in a string are text")
    }

    @Test func trailingCommasAreNotJSON() {
        // JSONDecoder accepts these; they are not JSON, and nothing sends them.
        #expect(parse("[1,]") == nil)
        #expect(parse(#"{"a":1,}"#) == nil)
    }

    @Test func invalidUTF8IsRefusedEverywhere() {
        let bad: [[UInt8]] = [
            [0xFF], [0xC3, 0x28], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xED, 0xA0, 0x80], [0xC0, 0x80],
        ]
        for sequence in bad {
            #expect(parse([0x22] + sequence + [0x22]) == nil)
            #expect(parse(Array(#"{"a":""#.utf8) + sequence + Array(#""}"#.utf8)) == nil)
            #expect(parse(Array(#"{""#.utf8) + sequence + Array(#"":1}"#.utf8)) == nil)
            #expect(parse(Array(#""\n"#.utf8) + sequence + [0x22]) == nil, "after an escape too")
        }
    }

    /// Where ``JSONParser/parseLocating(_:maximumNesting:)`` says the input is wrong.
    private func located(_ bytes: [UInt8], nesting: Int = JSONParser.defaultMaximumNesting)
        -> JSONParser.LocatedFailure?
    {
        do {
            _ = try JSONParser.parseLocating(Data(bytes), maximumNesting: nesting)
            return nil
        } catch {
            return error
        }
    }

    private func located(_ text: String, nesting: Int = JSONParser.defaultMaximumNesting) -> (
        failure: JSONParser.Failure, line: Int, column: Int, atEnd: Bool
    )? {
        located(Array(text.utf8), nesting: nesting).map { ($0.failure, $0.line, $0.column, $0.atEnd) }
    }

    @Test func aFailurePointsAtTheLineAndColumnOfWhatIsWrong() throws {
        // The issue's seed: a trailing comma, found at the ] on line 4.
        let trailing = try #require(located("[\n \"France\",\n \"Italy\",\n]"))
        #expect(trailing.failure == .notJSON && trailing.line == 4 && trailing.column == 1)
        // The byte that is wrong, not the one after it.
        #expect(located("[1 2]")! == (.notJSON, 1, 4, false))
        #expect(located(#"{"a":1 "b":2}"#)! == (.notJSON, 1, 8, false))
        #expect(located(#"{"a":1,}"#)! == (.notJSON, 1, 8, false))
        #expect(located("{} x")! == (.notJSON, 1, 4, false))
        #expect(located("[tru]")! == (.notJSON, 1, 2, false))
        // CR LF and lone CR end lines; columns count scalars, not bytes; a BOM is no column.
        #expect(located("[\r\n1,\r\n\r2 3]")! == (.notJSON, 4, 3, false))
        #expect(located("[\"é😀\", x]")! == (.notJSON, 1, 8, false))
        #expect(located("\u{FEFF}[x]")! == (.notJSON, 1, 2, false))
        #expect(located("[\n\t\"a\tb\"]")! == (.notJSON, 2, 4, false), "a raw tab in a string")
        // A string that is not UTF-8 is pointed at from its opening quote.
        let badUTF8 = try #require(located(Array("[1,\n \"a".utf8) + [0xFF] + Array("\"]".utf8)))
        #expect(badUTF8.failure == .notJSON && badUTF8.line == 2 && badUTF8.column == 2)
        // A key given twice: at the second one; one level too deep: at its bracket.
        #expect(located("[{\"a\":1,\n  \"a\":2}]")! == (.duplicateKey("a"), 2, 3, false))
        #expect(located("[[[1]]]", nesting: 2)! == (.tooDeep, 1, 3, false))
        // Input that ends early says so, at its last line.
        #expect(located("[\"France\",\n\"Ita")! == (.notJSON, 2, 5, true))
        #expect(located("")! == (.notJSON, 1, 1, true))
        #expect(located("[1,\n")! == (.notJSON, 2, 1, true))
    }

    @Test func parseLocatingAgreesWithParse() {
        for text in Self.corpus {
            let bytes = Array(text.utf8)
            let plain = bytes.withUnsafeBytes { buffer in
                Result { () throws(JSONParser.Failure) in try JSONParser.parse(buffer) }
            }
            let locating = Result { () throws(JSONParser.LocatedFailure) in
                try JSONParser.parseLocating(Data(bytes))
            }
            switch (plain, locating) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(text)")
            case (.failure(let a), .failure(let b)): #expect(a == b.failure, "\(text)")
            default: Issue.record("\(text): \(plain) but \(locating)")
            }
        }
    }

    /// The members of `bytes`, in order, as ``JSONParser/visitMembers(_:maximumNesting:_:)``
    /// visits them; nil when it is JSON but not an object.
    private static func visited(_ bytes: [UInt8], maximumNesting: Int = JSONParser.defaultMaximumNesting)
        throws(JSONParser.Failure) -> [(key: String, value: JSONValue)]?
    {
        var members: [(key: String, value: JSONValue)] = []
        let isObject = try JSONParser.visitMembers(Data(bytes), maximumNesting: maximumNesting) {
            key, value in
            members.append((key.string, value.decoded))
        }
        return isObject ? members : nil
    }

    /// The members of an object, each visited once, as ``JSONParser/parse(_:maximumNesting:)``
    /// reads them; the same outcome as it otherwise.
    private func agreeOnMembers(_ bytes: [UInt8]) -> Bool {
        let plain = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParser.Failure) in try JSONParser.parse(buffer, maximumNesting: 4) }
        }
        let members = Result { () throws(JSONParser.Failure) in try Self.visited(bytes, maximumNesting: 4) }
        switch (plain, members) {
        case (.success(.object(let fields)), .success(let list?)):
            return list.count == fields.count && list.allSatisfy { fields[$0.key] == $0.value }
        case (.success(let value), .success(nil)):
            if case .object = value { return false }
            return true
        case (.failure(let a), .failure(let b)): return a == b
        default: return false
        }
    }

    @Test func membersAgreeWithParse() {
        for text in Self.corpus { #expect(agreeOnMembers(Array(text.utf8)), "\(text)") }
        var random = SplitMix64(seed: 7)
        for bytes in Self.mutatedRequests(20_000, using: &random) {
            #expect(agreeOnMembers(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// In order, each key once: past the few checked one by one, a set of the keys catches a
    /// duplicate as well, and a large object costs no more than its length.
    @Test func membersKeepTheirOrderAndRefuseADuplicateAtAnySize() throws {
        let members = try #require(try Self.visited(Array(#"{"op":"toggle","id":"x","index":3}"#.utf8)))
        #expect(members.map(\.key) == ["op", "id", "index"])
        #expect(members.map(\.value) == [.string("toggle"), .string("x"), .integer(3)])
        for count in [2, 16, 17, 40, 20_000] {
            let keys = (0..<count).map { "\"k\($0)\":\($0)" }
            let whole = try #require(try Self.visited(Array("{\(keys.joined(separator: ","))}".utf8)))
            #expect(whole.count == count && whole.last?.value == .integer(Int64(count - 1)))
            for again in [0, count / 2, count - 1] {
                let twice = "{\(keys.joined(separator: ",")),\"k\(again)\":0}"
                #expect(throws: JSONParser.Failure.duplicateKey("k\(again)")) {
                    try Self.visited(Array(twice.utf8))
                }
            }
        }
    }

    /// A key is the same key however it is written: escaped, or with characters beyond ASCII,
    /// it still matches the plain one, and a second spelling of it is a duplicate.
    @Test func keysCompareByTheirTextHoweverWritten() throws {
        var matched: [Bool] = []
        _ = try JSONParser.visitMembers(Data(#"{"\u006fp":1,"op\u00e9":2,"":3,"öp":4}"#.utf8)) { key, _ in
            matched.append(key == "op")
        }
        #expect(matched == [true, false, false, false])
        for twice in [
            #"{"op":1,"\u006fp":2}"#, #"{"\u006fp":1,"op":2}"#, #"{"é":1,"\u00e9":2}"#, #"{"":1,"":2}"#,
        ] {
            #expect(throws: JSONParser.Failure.self, "\(twice)") { try Self.visited(Array(twice.utf8)) }
        }
        #expect(try Self.visited(Array(#"{"a":1,"b":{"a":2}}"#.utf8))?.count == 2)
    }

    /// Requests with one to three random bytes changed, inserted or removed.
    private static func mutatedRequests(_ count: Int, using random: inout SplitMix64) -> [[UInt8]] {
        let seeds = [
            #"{"op":"toggle","index":12,"id":"r-1","if_seq":7}"#,
            #"{"op":"add","name":"C\u00f4te","visited":true}"#,
            #"{"op":"list","extra":[1,-2.5e3,{"a":null,"b":false}]}"#, #"[1,"a",[true,{}]]"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[],:"\-+.eE0123456789tfnul ax"#.utf8) + [0x00, 0x7F, 0xC3, 0xA9, 0xFF]
        return (0..<count).map { _ in
            var bytes = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                default: if bytes.count > 1 { bytes.remove(at: at) }
                }
            }
            return bytes
        }
    }

    @Test func randomMutationsOfRequestsAgreeWithJSONDecoder() {
        var random = SplitMix64(seed: 6)
        var checked = 0
        for bytes in Self.mutatedRequests(20_000, using: &random) {
            let text = String(decoding: bytes, as: UTF8.self)
            // The one intended difference: trailing commas.
            if text.contains(",]") || text.contains(",}")
                || text.range(of: #",\s+[\]}]"#, options: .regularExpression) != nil
            {
                continue
            }
            // The other: a key given twice (a mutation can make "b" an "a").
            if hasDuplicateKey(bytes) { continue }
            checked += 1
            #expect(parse(bytes) == reference(bytes), "\(text)")
        }
        #expect(checked > 15_000)
    }
}
