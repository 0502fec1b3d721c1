import CountriesCore
import Foundation
import Testing

private struct Good: Sendable, CustomTestStringConvertible {
    var json: String
    var request: Request
    var testDescription: String { json }

    init(_ json: String, _ command: Command, id: String? = nil) {
        self.json = json
        self.request = Request(id: id, command: command)
    }
}

private let goodRequests: [Good] = [
    Good(#"{"op":"list"}"#, .query(.list)),
    Good(#"{"op":"list","id":"abc"}"#, .query(.list), id: "abc"),
    Good(#" { "id" : null , "op" : "list" } "#, .query(.list)),
    Good(#"{"op":"count","extra":[1,{"a":null}]}"#, .query(.count)),
    // A key is its text however it is written: escaped, it is still the key.
    Good(#"{"\u006fp":"toggle","\u0069ndex":4}"#, .change(.toggle(.index(4), ifSeq: nil))),
    Good(#"{"op":"count","op\u00e9":"list","\"op\"":"list"}"#, .query(.count)),
    Good(#"{"op":"get","index":0}"#, .query(.get(.index(0)))),
    Good(#"{"op":"get","index":1}"#, .query(.get(.index(1)))),
    Good(#"{"op":"get","index":-1}"#, .query(.get(.index(-1)))),
    Good(#"{"op":"get","index":9223372036854775807}"#, .query(.get(.index(.max)))),
    Good(#"{"op":"get","index":-9223372036854775808}"#, .query(.get(.index(.min)))),
    // Beyond Int's range: clamped, so the state answers index_out_of_range in the list's terms.
    Good(#"{"op":"get","index":18446744073709551615}"#, .query(.get(.index(.max)))),
    Good(#"{"op":"get","name":" france "}"#, .query(.get(.name(" france ")))),
    Good(#"{"op":"get","name":"France","index":null}"#, .query(.get(.name("France")))),
    Good(#"{"op":"get","index":3,"name":null}"#, .query(.get(.index(3)))),
    Good(#"{"op":"toggle","index":2}"#, .change(.toggle(.index(2)))),
    Good(#"{"op":"toggle","name":"France","if_seq":7}"#, .change(.toggle(.name("France"), ifSeq: 7))),
    Good(#"{"op":"toggle","index":2,"if_seq":0}"#, .change(.toggle(.index(2), ifSeq: 0))),
    Good(#"{"op":"toggle","index":2,"if_seq":null}"#, .change(.toggle(.index(2)))),
    Good(
        #"{"op":"toggle","index":2,"if_seq":9223372036854775807}"#,
        .change(.toggle(.index(2), ifSeq: UInt64(Int64.max)))),
    Good(
        #"{"op":"toggle","index":2,"if_seq":18446744073709551615}"#, .change(.toggle(.index(2), ifSeq: .max))),
    Good(#"{"op":"set","index":1,"visited":true}"#, .change(.set(.index(1), visited: true))),
    Good(#"{"op":"set","name":"Spain","visited":false}"#, .change(.set(.name("Spain"), visited: false))),
    Good(
        #"{"op":"set","name":"Spain","visited":false,"if_seq":3,"id":"r-1"}"#,
        .change(.set(.name("Spain"), visited: false, ifSeq: 3)), id: "r-1"),
    Good(#"{"op":"add","name":"Japan"}"#, .change(.add(name: "Japan", visited: false))),
    Good(#"{"op":"add","name":"Japan","visited":null}"#, .change(.add(name: "Japan", visited: false))),
    Good(#"{"op":"add","name":"Japan","visited":true}"#, .change(.add(name: "Japan", visited: true))),
    // The state validates names, not the decoder: an empty name reaches it and is refused there.
    Good(#"{"op":"add","name":""}"#, .change(.add(name: ""))),
    Good(#"{"op":"add","name":"C\u00f4te d\u2019Ivoire"}"#, .change(.add(name: "Côte d’Ivoire"))),
    Good(#"{"op":"remove","index":7}"#, .change(.remove(.index(7)))),
    Good(#"{"op":"remove","name":"romania"}"#, .change(.remove(.name("romania")))),
    Good(#"{"op":"reset"}"#, .change(.reset)),
    Good(#"{"op":"history","since":0}"#, .history(since: 0)),
    Good(#"{"op":"history","since":12345}"#, .history(since: 12_345)),
    Good(
        #"{"op":"status","id":"\#(String(repeating: "x", count: 64))"}"#, .status,
        id: String(repeating: "x", count: 64)),
    Good(#"{"op":"status","id":" !~"}"#, .status, id: " !~"),
    // Numbers that are exactly integers, however they are written.
    Good(#"{"op":"get","index":1.0}"#, .query(.get(.index(1)))),
    Good(#"{"op":"get","index":-0.0}"#, .query(.get(.index(0)))),
    Good(#"{"op":"get","index":2.50e1}"#, .query(.get(.index(25)))),
    Good(#"{"op":"get","index":0e999999999999}"#, .query(.get(.index(0)))),
    Good(#"{"op":"history","since":1e3}"#, .history(since: 1_000)),
    Good(#"{"op":"history","since":1.8446744073709551615e19}"#, .history(since: .max)),
    Good(
        #"{"op":"toggle","index":2,"if_seq":922337203685477580700e-2}"#,
        .change(.toggle(.index(2), ifSeq: UInt64(Int64.max)))),
]

private struct Bad: Sendable, CustomTestStringConvertible {
    var body: Data
    var code: CountriesError.Code
    var message: String?
    var testDescription: String { String(decoding: body.prefix(80), as: UTF8.self) }

    init(_ json: String, _ code: CountriesError.Code = .badRequest, _ message: String? = nil) {
        self.body = Data(json.utf8)
        self.code = code
        self.message = message
    }

    init(bytes: [UInt8], _ code: CountriesError.Code = .badRequest) {
        self.body = Data(bytes)
        self.code = code
    }
}

private let notJSON = "the request is not valid UTF-8 JSON: send one JSON object such as {\"op\": \"list\"}"
private let ops = "list, get, count, toggle, set, add, remove, reset, history, status"
private let idRule = "\"id\" must be 1 to 64 bytes of printable ASCII (0x20 to 0x7E)"
private func notExact(_ key: String, _ kind: String = "an integer", roundsTo value: String) -> String {
    "\"\(key)\" must be \(kind), not a number that only rounds to one (\(value))"
}

private let badRequests: [Bad] = [
    Bad("", .badRequest, notJSON),
    Bad("list", .badRequest, notJSON),
    Bad(#"{"op":"list""#, .badRequest, notJSON),
    Bad(#"{"op":"list"} {"op":"list"}"#, .badRequest, notJSON),
    Bad(#"{'op':'list'}"#, .badRequest, notJSON),
    Bad(bytes: [0x7B, 0x22, 0x6F, 0x70, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D]),  // {"op":"\xFF\xFE"}
    Bad(bytes: [0xC3, 0x28]),
    Bad("[]", .badRequest, "the request must be a JSON object such as {\"op\": \"list\"}, not an array"),
    Bad(
        #"[{"op":"list"}]"#, .badRequest,
        "the request must be a JSON object such as {\"op\": \"list\"}, not an array"),
    Bad(
        #""list""#, .badRequest, "the request must be a JSON object such as {\"op\": \"list\"}, not a string"),
    Bad("42", .badRequest, "the request must be a JSON object such as {\"op\": \"list\"}, not a number"),
    Bad("true", .badRequest, "the request must be a JSON object such as {\"op\": \"list\"}, not a boolean"),
    Bad("null", .badRequest, "the request must be a JSON object such as {\"op\": \"list\"}, not null"),
    Bad("{}", .badRequest, "the request has no \"op\"; one of: \(ops)"),
    Bad(#"{"op":null}"#, .badRequest, "\"op\" must be a string, not null"),
    Bad(#"{"op":1}"#, .badRequest, "\"op\" must be a string, not a number"),
    Bad(#"{"op":["list"]}"#, .badRequest, "\"op\" must be a string, not an array"),
    Bad(#"{"op":"LIST"}"#, .unknownOp, "unknown op \"LIST\"; one of: \(ops)"),
    Bad(#"{"op":"fly"}"#, .unknownOp, "unknown op \"fly\"; one of: \(ops)"),
    Bad(#"{"op":""}"#, .unknownOp, "unknown op \"\"; one of: \(ops)"),
    Bad(
        #"{"op":"\#(String(repeating: "z", count: 70))"}"#, .unknownOp,
        "unknown op \"\(String(repeating: "z", count: 60))...\"; one of: \(ops)"),
    Bad(#"{"op":"get"}"#, .badRequest, "give the country as \"index\" (0-based) or \"name\""),
    Bad(
        #"{"op":"get","index":null,"name":null}"#, .badRequest,
        "give the country as \"index\" (0-based) or \"name\""),
    Bad(#"{"op":"toggle"}"#, .badRequest, "give the country as \"index\" (0-based) or \"name\""),
    Bad(#"{"op":"remove"}"#, .badRequest, "give the country as \"index\" (0-based) or \"name\""),
    Bad(#"{"op":"set","visited":true}"#, .badRequest, "give the country as \"index\" (0-based) or \"name\""),
    Bad(
        #"{"op":"toggle","index":1,"name":"France"}"#, .badRequest,
        "give either \"index\" or \"name\", not both"),
    Bad(#"{"op":"toggle","index":"1"}"#, .badRequest, "\"index\" must be an integer, not a string"),
    Bad(#"{"op":"toggle","index":1.5}"#, .badRequest, "\"index\" must be an integer, not 1.5"),
    Bad(#"{"op":"toggle","index":1e300}"#, .badRequest, "\"index\" must be an integer, not 1e+300"),
    Bad(#"{"op":"toggle","index":100000000000000000000000}"#),
    Bad(#"{"op":"toggle","index":true}"#, .badRequest, "\"index\" must be an integer, not a boolean"),
    Bad(#"{"op":"toggle","index":[1]}"#, .badRequest, "\"index\" must be an integer, not an array"),
    Bad(#"{"op":"toggle","name":7}"#, .badRequest, "\"name\" must be a string, not a number"),
    Bad(#"{"op":"toggle","name":{"a":1}}"#, .badRequest, "\"name\" must be a string, not an object"),
    Bad(
        #"{"op":"toggle","index":1,"if_seq":-1}"#, .badRequest,
        "\"if_seq\" must be a non-negative integer, not -1"),
    Bad(
        #"{"op":"toggle","index":1,"if_seq":"3"}"#, .badRequest,
        "\"if_seq\" must be a non-negative integer, not a string"),
    Bad(
        #"{"op":"toggle","index":1,"if_seq":2.5}"#, .badRequest,
        "\"if_seq\" must be a non-negative integer, not 2.5"),
    Bad(#"{"op":"set","index":1}"#, .badRequest, "the request has no \"visited\" (true or false)"),
    Bad(
        #"{"op":"set","index":1,"visited":null}"#, .badRequest,
        "the request has no \"visited\" (true or false)"),
    Bad(
        #"{"op":"set","index":1,"visited":"true"}"#, .badRequest,
        "\"visited\" must be true or false, not a string"),
    Bad(
        #"{"op":"set","index":1,"visited":1}"#, .badRequest, "\"visited\" must be true or false, not a number"
    ),
    Bad(
        #"{"op":"set","index":1,"visited":0}"#, .badRequest, "\"visited\" must be true or false, not a number"
    ),
    Bad(#"{"op":"set","index":1,"visited":true,"if_seq":-5}"#),
    Bad(#"{"op":"add"}"#, .badRequest, "the request has no \"name\" (the country's name)"),
    Bad(#"{"op":"add","name":null}"#, .badRequest, "the request has no \"name\" (the country's name)"),
    Bad(#"{"op":"add","name":1}"#, .badRequest, "\"name\" must be a string, not a number"),
    Bad(
        #"{"op":"add","name":"Japan","visited":"yes"}"#, .badRequest,
        "\"visited\" must be true or false, not a string"),
    Bad(#"{"op":"history"}"#, .badRequest, "the request has no \"since\" (a seq, 0 for everything kept)"),
    Bad(#"{"op":"history","since":-1}"#, .badRequest, "\"since\" must be a non-negative integer, not -1"),
    Bad(#"{"op":"history","since":"0"}"#),
    Bad(#"{"op":"list","id":1}"#, .badRequest, "\"id\" must be a string, not a number"),
    Bad(#"{"op":"list","id":true}"#, .badRequest, "\"id\" must be a string, not a boolean"),
    Bad(#"{"op":"list","id":""}"#, .badRequest, idRule + "; it has 0 bytes"),
    Bad(
        #"{"op":"list","id":"\#(String(repeating: "x", count: 65))"}"#, .badRequest,
        idRule + "; it has 65 bytes"),
    // Bytes, not characters: 64 characters of combining marks were 60 KB.
    Bad(
        #"{"op":"list","id":"\#(String(repeating: "e\u{301}", count: 64))"}"#, .badRequest,
        idRule + "; it has 192 bytes"),
    Bad(#"{"op":"list","id":"caf\u00e9"}"#, .badRequest, idRule + "; byte 3 is 0xC3"),
    Bad(#"{"op":"list","id":"a\tb"}"#, .badRequest, idRule + "; byte 1 is 0x09"),
    Bad(#"{"op":"list","id":"\u007f"}"#, .badRequest, idRule + "; byte 0 is 0x7F"),
    // DEL unescaped is JSON, and plain ASCII: the id is checked for it all the same.
    Bad("{\"op\":\"list\",\"id\":\"ab\u{7F}\"}", .badRequest, idRule + "; byte 2 is 0x7F"),
    // The last byte the rule allows is checked; past it, the length is what is wrong.
    Bad(
        #"{"op":"list","id":"\#(String(repeating: "x", count: 63))\u007f"}"#, .badRequest,
        idRule + "; byte 63 is 0x7F"),
    Bad(
        #"{"op":"list","id":"x\u007f\#(String(repeating: "x", count: 63))"}"#, .badRequest,
        idRule + "; it has 65 bytes"),
    // Numbers that are not exactly integers in range: JSON parsers read them differently.
    Bad(#"{"op":"toggle","index":0.99999999999999999999}"#, .badRequest, notExact("index", roundsTo: "1.0")),
    Bad(#"{"op":"toggle","index":1e-400}"#, .badRequest, notExact("index", roundsTo: "0.0")),
    Bad(#"{"op":"toggle","index":-1e-400}"#, .badRequest, notExact("index", roundsTo: "-0.0")),
    Bad(
        #"{"op":"toggle","index":1,"if_seq":1.0000000000000000001}"#, .badRequest,
        notExact("if_seq", "a non-negative integer", roundsTo: "1.0")),
    Bad(#"{"op":"history","since":0.5}"#, .badRequest, "\"since\" must be a non-negative integer, not 0.5"),
    Bad(#"{"op":"history","since":18446744073709551616}"#),
    Bad(#"{"op":"history","since":1.8446744073709551616e19}"#),
    // A key given twice: parsers disagree on which one counts.
    Bad(
        #"{"op":"toggle","index":1,"index":2}"#, .badRequest,
        "the request has the key \"index\" more than once; give each key once"),
    Bad(#"{"op":"list","op":"reset"}"#),
    Bad(
        #"{"op":"list","\u006fp":"reset"}"#, .badRequest,
        "the request has the key \"op\" more than once; give each key once"),
    Bad(#"{"op":"list","id":"a","id":"b"}"#),
    Bad(#"{"op":"list","x":{"a":1,"a":2}}"#),
    // The id is checked whatever the op.
    Bad(#"{"op":"fly","id":""}"#),
]

@Suite struct RequestDecodeTests {
    @Test(arguments: goodRequests)
    fileprivate func decodes(_ good: Good) throws {
        #expect(try decodeRequest(good.json) == good.request)
    }

    @Test(arguments: badRequests)
    fileprivate func refuses(_ bad: Bad) {
        let error = requestError(bad.body)
        #expect(error?.code == bad.code)
        if let message = bad.message {
            #expect(error?.message == message)
        }
    }

    @Test func bodyAtTheSizeLimitIsParsedAndOneByteMoreIsTooLarge() throws {
        let core = #"{"op":"list"}"#
        let padding = String(repeating: " ", count: Limits.maximumRequestBytes - core.utf8.count)
        #expect(try decodeRequest(core + padding) == Request(command: .query(.list)))
        let error = requestError(Data((core + padding + " ").utf8))
        #expect(error == CountriesError(.tooLarge, "the request has 65537 bytes; at most 65536 are accepted"))
    }

    @Test func hugeBodyIsTooLargeWithoutParsing() {
        let error = requestError(Data(repeating: 0x5B, count: 10 * 1024 * 1024))
        #expect(error?.code == .tooLarge)
    }

    @Test(arguments: [
        String(repeating: "[", count: 10_000),
        String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000),
        String(repeating: "{\"a\":", count: 10_000) + "1" + String(repeating: "}", count: 10_000),
        #"{"op":"list","x":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
            + "}",
        #"{"op":"get","index":"# + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
            + "}",
    ])
    func deeplyNestedJSONIsABadRequestNotACrash(json: String) {
        #expect(requestError(Data(json.utf8))?.code == .badRequest)
    }

    @Test func moderatelyNestedFieldsAreIgnoredLikeAnyUnknownField() throws {
        // Up to Limits.maximumNesting levels in all, the request object's own included.
        let depth = Limits.maximumNesting - 1
        let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(try decodeRequest(#"{"op":"count","x":\#(nested)}"#) == Request(command: .query(.count)))
    }

    @Test func nestingBeyondTheLimitIsRefusedWhileParsing() throws {
        let nested = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let error = requestError(Data(#"{"op":"count","x":\#(nested)}"#.utf8))
        #expect(error?.code == .badRequest)
        #expect(
            error?.message
                == "the request nests arrays or objects more than 16 levels deep; at most 16 are accepted")
        let justOver = String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
        #expect(requestError(Data(#"{"op":"count","x":\#(justOver)}"#.utf8))?.message == error?.message)
        // Brackets inside strings are text, not nesting.
        let text = String(repeating: "[", count: 200)
        #expect(try decodeRequest(#"{"op":"count","x":"\#(text)"}"#) == Request(command: .query(.count)))
    }
}

@Suite struct RequestEncodeTests {
    private static let requests: [Request] = [
        Request(command: .query(.list)),
        Request(id: "a", command: .query(.count)),
        Request(command: .query(.get(.index(3)))),
        Request(id: String(repeating: "~", count: 64), command: .query(.get(.name("Côte d’Ivoire")))),
        Request(command: .change(.toggle(.index(0)))),
        Request(command: .change(.toggle(.name(" france "), ifSeq: 0))),
        Request(command: .change(.toggle(.index(-1), ifSeq: UInt64(Int64.max)))),
        Request(command: .change(.toggle(.index(.max), ifSeq: .max))),
        Request(command: .change(.set(.index(.min), visited: true))),
        Request(command: .change(.set(.name("Spain"), visited: false, ifSeq: 12))),
        Request(id: "x/y\"z\\", command: .change(.add(name: "Japan\n\u{1}", visited: true))),
        Request(command: .change(.add(name: "Peru"))),
        Request(command: .change(.remove(.index(7)))),
        Request(command: .change(.remove(.name("Romania")))),
        Request(command: .change(.reset)),
        Request(command: .history(since: 0)),
        Request(command: .history(since: .max)),
        Request(id: "s", command: .status),
    ]

    @Test(arguments: requests)
    func roundTrips(request: Request) throws {
        #expect(try Request.decode(request.encoded()) == request)
    }

    @Test func wireShape() {
        #expect(text(Request(command: .query(.list)).encoded()) == #"{"op":"list"}"#)
        #expect(
            text(Request(id: "r1", command: .change(.toggle(.index(2), ifSeq: 5))).encoded())
                == #"{"id":"r1","if_seq":5,"index":2,"op":"toggle"}"#)
        #expect(
            text(Request(command: .change(.set(.name("France"), visited: false))).encoded())
                == #"{"name":"France","op":"set","visited":false}"#)
        #expect(
            text(Request(command: .change(.add(name: "a/b"))).encoded())
                == #"{"name":"a/b","op":"add","visited":false}"#)
        #expect(text(Request(command: .history(since: 4)).encoded()) == #"{"op":"history","since":4}"#)
        #expect(
            text(Request(command: .change(.remove(.index(0)))).encoded()) == #"{"index":0,"op":"remove"}"#)
    }

    @Test(arguments: requests)
    func aChangesCanonicalFormIsItsRequestWithoutTheIdAndWithItsNameFolded(request: Request) throws {
        guard case .change(let change) = request.command else { return }
        let canonical = try Request.decode(Data(change.canonicalForm))
        #expect(canonical.id == nil)
        #expect(canonical.encoded(as: [UInt8].self) == change.canonicalForm, "one form, stable")
        #expect(canonical.command.op == request.command.op)
        if case .change(.add) = request.command { #expect(canonical.command == request.command) }
    }

    @Test func aRetryThatWritesTheNameOtherwiseAsksTheSame() {
        // Names match case-insensitively after trimming: the same country, the same change.
        #expect(
            Change.toggle(.name("fRaNcE")).canonicalForm == Change.toggle(.name(" France ")).canonicalForm)
        #expect(Change.toggle(.name("France")).canonicalForm != Change.toggle(.name("Italy")).canonicalForm)
        #expect(Change.toggle(.name("France")).canonicalForm != Change.remove(.name("France")).canonicalForm)
        #expect(Change.add(name: "Peru").canonicalForm != Change.add(name: "peru").canonicalForm)
    }

    @Test func opNames() {
        let commands: [Command] = [
            .query(.list), .query(.get(.index(0))), .query(.count), .change(.toggle(.index(0))),
            .change(.set(.index(0), visited: true)), .change(.add(name: "x")), .change(.remove(.index(0))),
            .change(.reset), .history(since: 0), .status,
        ]
        #expect(commands.map(\.op) == Command.knownOps)
    }
}

@Suite struct EchoedInputTests {
    @Test func namesInMessagesAreEscapedAndCut() {
        let state = CountriesState(countries: SeedList.standard)
        let hostile = "\u{1B}[2J" + String(repeating: "x", count: 100)
        #expect(throws: CountriesError.self) { try state.index(of: .name(hostile)) }
        do {
            _ = try state.index(of: .name(hostile))
        } catch {
            #expect(!error.message.contains("\u{1B}"))
            #expect(error.message.contains("\\u{1B}[2J"))
            #expect(error.message.count < 150)
        }
    }

    @Test func combiningMarksCannotHideAHugeName() {
        let name = "e" + String(repeating: "\u{0301}", count: 1_000)
        #expect(name.count == 1)
        #expect(
            throws: CountriesError(
                .invalidName, "a country name may have at most 400 Unicode scalars; this one has 1001")
        ) {
            try CountryName.validate(name)
        }
    }
}
