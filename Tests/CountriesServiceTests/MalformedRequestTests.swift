import CountriesCore
import Foundation
import Testing

/// Hostile or careless input: each gets a clear refusal, nothing changes, and the service goes on.
@Suite struct MalformedRequestTests {
    struct Malformed: Sendable, CustomTestStringConvertible {
        var label: String
        var body: [UInt8]
        var code: String
        var mention: String

        var testDescription: String { label }
    }

    static let cases: [Malformed] = [
        Malformed(label: "not JSON", body: Array("toggle France".utf8), code: "bad_request", mention: "JSON"),
        Malformed(
            label: "truncated JSON", body: Array(#"{"op":"list""#.utf8), code: "bad_request", mention: "JSON"),
        Malformed(
            label: "a JSON array", body: Array(#"["list"]"#.utf8), code: "bad_request", mention: "an array"),
        Malformed(
            label: "a JSON string", body: Array(#""list""#.utf8), code: "bad_request", mention: "a string"),
        Malformed(
            label: "missing op", body: Array(#"{"index":1}"#.utf8), code: "bad_request", mention: "\"op\""),
        Malformed(
            label: "op not a string", body: Array(#"{"op":7}"#.utf8), code: "bad_request", mention: "\"op\""),
        Malformed(
            label: "index a string", body: Array(#"{"op":"toggle","index":"1"}"#.utf8), code: "bad_request",
            mention: "\"index\" must be an integer"),
        Malformed(
            label: "index a fraction", body: Array(#"{"op":"toggle","index":1.5}"#.utf8), code: "bad_request",
            mention: "1.5"),
        Malformed(
            label: "name a number", body: Array(#"{"op":"remove","name":3}"#.utf8), code: "bad_request",
            mention: "\"name\" must be a string"),
        Malformed(
            label: "visited a string", body: Array(#"{"op":"set","index":1,"visited":"yes"}"#.utf8),
            code: "bad_request", mention: "\"visited\" must be true or false"),
        Malformed(
            label: "if_seq negative", body: Array(#"{"op":"toggle","index":1,"if_seq":-1}"#.utf8),
            code: "bad_request", mention: "\"if_seq\" must be a non-negative integer"),
        Malformed(
            label: "since a string", body: Array(#"{"op":"history","since":"0"}"#.utf8), code: "bad_request",
            mention: "\"since\""),
        Malformed(
            label: "id a number", body: Array(#"{"op":"toggle","index":1,"id":5}"#.utf8), code: "bad_request",
            mention: "\"id\" must be a string"),
        Malformed(
            label: "id too long",
            body: Array(#"{"op":"toggle","index":1,"id":"\#(String(repeating: "i", count: 65))"}"#.utf8),
            code: "bad_request", mention: "65"),
        Malformed(
            label: "unknown op", body: Array(#"{"op":"TOGGLE","index":1}"#.utf8), code: "unknown_op",
            mention: "TOGGLE"),
        Malformed(label: "an empty frame", body: [], code: "bad_request", mention: "JSON"),
        Malformed(
            label: "an over-long name",
            body: Array(#"{"op":"add","name":"\#(String(repeating: "é", count: 101))"}"#.utf8),
            code: "invalid_name", mention: "at most 100"),
        Malformed(
            label: "invalid UTF-8 in a string",
            body: Array(#"{"op":"add","name":"Bad"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8),
            code: "bad_request", mention: "UTF-8"),
        Malformed(
            label: "invalid UTF-8 bytes", body: [0xFF, 0xFE, 0x7B, 0x7D], code: "bad_request",
            mention: "UTF-8"),
    ]

    @Test(arguments: cases)
    func isRefusedClearlyAndChangesNothing(_ malformed: Malformed) throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let before = try service.snapshot()

        let refusal = try RawReply(service.rawRequest([Data(malformed.body)]))
        #expect(refusal.reply.ok == false)
        #expect(refusal.code == malformed.code)
        #expect(refusal.message.contains(malformed.mention), "\"\(refusal.message)\"")
        #expect(try service.snapshot() == before)
        // The service keeps answering, and changes still work.
        #expect(try service.request(#"{"op":"toggle","index":1}"#).reply.seq == before.seq + 1)
    }

    @Test func aMultiFrameRequestFromREQIsRefused() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let reply = try RawReply(
            service.rawRequest([Data(#"{"op":"toggle","#.utf8), Data(#""index":1}"#.utf8)]))
        #expect(reply.code == "bad_request")
        #expect(reply.message.contains("2 frames"), "\"\(reply.message)\"")
        #expect(try service.snapshot() == CountriesState(countries: SeedList.standard, seq: 0))
    }

    @Test func aMultiFrameRequestFromDEALERIsRefused() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let dealer = try service.commandSocket(.dealer)

        // Without a delimiter, with one, and a delimiter with nothing after it.
        let toggle = Data(#"{"op":"toggle","index":1}"#.utf8)
        #expect(try dealer.send([toggle, toggle]))
        let plain = try #require(try dealer.receive())
        #expect(plain.count == 1)
        let refusal = try RawReply(try #require(plain.last))
        #expect(refusal.code == "bad_request")
        #expect(refusal.message.contains("2 frames"))

        #expect(try dealer.send([Data(), toggle, Data(#"{"op":"list"}"#.utf8)]))
        let enveloped = try #require(try dealer.receive())
        #expect(enveloped.first == Data())
        #expect(try RawReply(try #require(enveloped.last)).code == "bad_request")

        #expect(try dealer.send([Data()]))
        let empty = try #require(try dealer.receive())
        let emptyRefusal = try RawReply(try #require(empty.last))
        #expect(emptyRefusal.code == "bad_request")
        #expect(emptyRefusal.message.contains("no body frame"), "\"\(emptyRefusal.message)\"")

        #expect(try service.snapshot() == CountriesState(countries: SeedList.standard, seq: 0))
    }

    @Test func manyBadRequestsInOneBatchDoNotDisturbTheGoodOnes() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let dealer = try service.commandSocket(.dealer)

        let bodies = [
            "junk", #"{"op":"toggle","index":0}"#, "[]", #"{"op":"nope"}"#, #"{"op":"toggle","index":99}"#,
            #"{"op":"toggle","index":1}"#,
        ]
        for body in bodies {
            #expect(try dealer.send([Data(), Data(body.utf8)]))
        }
        var codes: [String?] = []
        var seqs: [UInt64?] = []
        for _ in bodies {
            let frames = try #require(try dealer.receive())
            let reply = try RawReply(try #require(frames.last))
            codes.append(reply.code)
            seqs.append(reply.reply.seq)
        }
        #expect(
            codes == [
                "bad_request", nil, "bad_request", "unknown_op", "index_out_of_range", nil,
            ])
        #expect(seqs == [nil, 1, nil, nil, nil, 2])
        #expect(try service.snapshot().seq == 2)
    }
}
