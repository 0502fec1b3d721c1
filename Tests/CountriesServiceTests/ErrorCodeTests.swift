import CountriesCore
import Foundation
import Testing

/// Every error code the service produces today, each with a message a person can act on, and
/// none of them changing the state.
@Suite struct ErrorCodeTests {
    /// Sends `json`, expects a refusal with `code` whose message contains each of `mentions`,
    /// and that the state did not change.
    private func expectRefusal(
        _ service: ServiceHarness, _ json: String, code: String, mentioning mentions: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try service.snapshot()
        let refusal = try service.request(json)
        #expect(refusal.object["ok"] as? Bool == false, sourceLocation: sourceLocation)
        let error = try #require(refusal.object["error"] as? [String: Any], sourceLocation: sourceLocation)
        #expect(error["code"] as? String == code, "\(json)", sourceLocation: sourceLocation)
        let message = error["message"] as? String ?? ""
        for mention in mentions {
            #expect(
                message.contains(mention), "\"\(message)\" should mention \(mention)",
                sourceLocation: sourceLocation)
        }
        #expect(try service.snapshot() == before, "a refusal changes nothing", sourceLocation: sourceLocation)
    }

    @Test func badRequest() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        try expectRefusal(service, #"{"op":"get"}"#, code: "bad_request", mentioning: ["index", "name"])
        try expectRefusal(service, #"{"op":"set","index":1}"#, code: "bad_request", mentioning: ["visited"])
        try expectRefusal(service, #"{"op":"history"}"#, code: "bad_request", mentioning: ["since"])
        try expectRefusal(
            service, #"{"op":"toggle","index":1,"name":"France"}"#, code: "bad_request",
            mentioning: ["either"])
        try expectRefusal(
            service, #"{"op":"list","id":""}"#, code: "bad_request", mentioning: ["\"id\"", "64"])
    }

    @Test func unknownOp() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        try expectRefusal(
            service, #"{"op":"fly"}"#, code: "unknown_op", mentioning: ["fly", "list", "toggle"])
    }

    @Test func indexOutOfRange() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        try expectRefusal(
            service, #"{"op":"get","index":8}"#, code: "index_out_of_range",
            mentioning: ["index 8", "8 countries", "0 to 7"])
        try expectRefusal(
            service, #"{"op":"toggle","index":-1}"#, code: "index_out_of_range", mentioning: ["-1"])
        try expectRefusal(
            service, #"{"op":"remove","index":99999999999}"#, code: "index_out_of_range",
            mentioning: ["99999999999"])
    }

    @Test func notFound() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        try expectRefusal(
            service, #"{"op":"get","name":"Atlantis"}"#, code: "not_found", mentioning: ["Atlantis"])
        try expectRefusal(
            service, #"{"op":"set","name":"Atlantis","visited":true}"#, code: "not_found",
            mentioning: ["Atlantis"])
    }

    @Test func duplicate() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        try expectRefusal(
            service, #"{"op":"add","name":" fRance "}"#, code: "duplicate", mentioning: ["France", "index 2"])
    }

    @Test func invalidName() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        try expectRefusal(service, #"{"op":"add","name":"   "}"#, code: "invalid_name", mentioning: ["empty"])
        try expectRefusal(
            service, #"{"op":"add","name":"Bad\u0007Name"}"#, code: "invalid_name", mentioning: ["control"])
        let long = String(repeating: "x", count: Limits.maximumNameLength + 1)
        try expectRefusal(
            service, #"{"op":"add","name":"\#(long)"}"#, code: "invalid_name", mentioning: ["100", "101"])
    }

    @Test func tooLargeBody() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let padding = String(repeating: " ", count: Limits.maximumRequestBytes)
        try expectRefusal(
            service, #"{"op":"list"}"# + padding, code: "too_large", mentioning: ["65549", "65536"])
        // The limit itself is accepted.
        let fitting = #"{"op":"count"}"# + String(repeating: " ", count: Limits.maximumRequestBytes - 14)
        #expect(fitting.utf8.count == Limits.maximumRequestBytes)
        #expect(try service.request(fitting).reply.count == 8)
    }

    @Test func tooLargeListIsFull() throws {
        let service = try ServiceHarness(seed: syntheticSeed(Limits.maximumCountries), inMemory: true)
        defer { service.shutdown() }

        try expectRefusal(
            service, #"{"op":"add","name":"One Too Many"}"#, code: "too_large", mentioning: ["full", "10000"])
        // Removing one makes room again.
        #expect(try service.request(#"{"op":"remove","index":0}"#).reply.ok)
        #expect(try service.request(#"{"op":"add","name":"One Too Many"}"#).reply.country?.index == 9_999)
    }

    @Test func conflict() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        _ = try service.request(#"{"op":"toggle","index":0}"#)
        try expectRefusal(
            service, #"{"op":"toggle","index":1,"if_seq":0}"#, code: "conflict",
            mentioning: ["if_seq 0", "1"])
        try expectRefusal(
            service, #"{"op":"set","index":1,"visited":true,"if_seq":7}"#, code: "conflict",
            mentioning: ["if_seq 7"])
    }

    @Test func historyTruncatedAheadOfTheCurrentSeq() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        _ = try service.request(#"{"op":"toggle","index":0}"#)
        try expectRefusal(
            service, #"{"op":"history","since":5}"#, code: "history_truncated",
            mentioning: ["5", "current seq 1", "list"])
    }

    @Test func historyTruncatedPastTheRetainedEvents() throws {
        let service = try ServiceHarness(inMemory: true)
        defer { service.shutdown() }

        // One event more than is kept: 10,001 toggles, pipelined on a DEALER.
        let total = Limits.retainedEvents + 1
        let dealer = try service.commandSocket(.dealer)
        let body = Data(#"{"op":"toggle","index":0}"#.utf8)
        var sent = 0
        var received = 0
        while received < total {
            while sent < total && sent - received < 500 {
                #expect(try dealer.send([Data(), body]))
                sent += 1
            }
            let reply = try #require(try dealer.receive(), "reply \(received + 1) of \(total)")
            #expect(try RawReply(reply[1]).reply.ok)
            received += 1
        }
        #expect(try service.snapshot().seq == UInt64(total))

        let status = try service.request(#"{"op":"status"}"#)
        #expect(status.reply.status?.historyFrom == 2)
        // Every kept event, a page at a time.
        var since: UInt64 = 1
        var kept = 0
        for _ in 0..<(Limits.retainedEvents / Limits.historyPageEvents + 1) {
            let page = try service.request(.history(since: since)).reply
            kept += page.events?.count ?? 0
            guard page.more == true, let last = page.events?.last else { break }
            since = last.seq
        }
        #expect(kept == Limits.retainedEvents)
        try expectRefusal(
            service, #"{"op":"history","since":0}"#, code: "history_truncated",
            mentioning: ["after 0", "oldest is 2", "list"])
    }
}
