import CountriesCore
import Foundation
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesService

/// What the socket loop learns from a request before decoding it.
@Suite struct IncomingRequestTests {
    /// `frames` given to an assembler one by one, as the reader receives them.
    private func assembling(_ frames: [String]) -> IncomingRequest.Assembler {
        var assembler = IncomingRequest.Assembler()
        for (index, frame) in frames.enumerated() {
            Array(frame.utf8).withUnsafeBytes { assembler.take($0, more: index < frames.count - 1) }
        }
        return assembler
    }

    private func request(_ frames: [String]) -> IncomingRequest {
        IncomingRequest(envelope: [Data("peer".utf8), Data()], body: frames.map { Array($0.utf8) })
    }

    @Test func aHistoryRequestMayBeHistoryAndOthersNot() {
        #expect(request([#"{"op":"history","since":0}"#]).likelyReply == .historyPage)
        #expect(request(["history"]).likelyReply == .historyPage)
        #expect(request(["x", #"{"since":3,"op":"history"}"#]).likelyReply == .historyPage, "in any frame")
        #expect(request([String(repeating: "h", count: 70_000) + "history"]).likelyReply == .historyPage)
        #expect(request([#"{"op":"toggle","index":1,"id":"a"}"#]).likelyReply != .historyPage)
        #expect(request([#"{"op":"histor"}"#, "y"]).likelyReply != .historyPage)
        #expect(request(["historhistorY"]).likelyReply != .historyPage)
        #expect(request([]).likelyReply != .historyPage)
        #expect(request([""]).likelyReply != .historyPage)
    }

    /// It runs for every request the loop reads, before the batch is handled: a profile of 16
    /// durable clients had the generic `Data.firstRange(of:)` it used at 6 % of the service's
    /// samples, more than the SQLite commit. A 64 KiB frame (the largest request) scanned 2,000
    /// times took about 1.5 s in a debug build with it, about 10 ms with `memmem`.
    @Test func scanningALargeFrameIsCheap() {
        let large = request([String(repeating: "x", count: 64 * 1024 - 1)])
        let clock = ContinuousClock()
        var found = 0
        let elapsed = clock.measure {
            for _ in 0..<2_000 where large.likelyReply == .historyPage { found += 1 }
        }
        #expect(found == 0)
        #expect(elapsed < .milliseconds(400) * testSlowdown, "\(elapsed) for 2,000 scans of 64 KiB")
    }

    /// The batch's byte budget guesses each reply before decoding: a page of history, a whole
    /// list for `list` and `reset`, nothing for the rest.
    @Test func repliesAreEstimatedForTheBatchBudget() {
        #expect(request([#"{"op":"list"}"#]).likelyReply.estimatedBytes(listBytes: 9_000) == 9_000)
        #expect(request([#"{"op":"reset","id":"x"}"#]).likelyReply.estimatedBytes(listBytes: 9_000) == 9_000)
        #expect(
            request([#"{"op":"history","since":0}"#]).likelyReply.estimatedBytes(listBytes: 9_000)
                == Limits.historyPageBytes)
        #expect(request([#"{"op":"toggle","index":1}"#]).likelyReply.estimatedBytes(listBytes: 9_000) == 0)
        #expect(request([#"{"op":"count"}"#]).likelyReply.estimatedBytes(listBytes: 9_000) == 0)
        // An op spelt with an escape may be any: `list` and `history` so spelt were taken for
        // small replies, past the unread replies' bound and the batch's history limit.
        for escaped in [#"{"op":"l\u0069st"}"#, #"{"op":"hi\u0073tory","since":0}"#, #"{"\u006fp":"reset"}"#]
        {
            let likely = request([escaped]).likelyReply
            #expect(likely == .anyOp, "\(escaped)")
            #expect(likely.estimatedBytes(listBytes: 9_000) == max(9_000, Limits.historyPageBytes))
            #expect(likely.estimatedBytes(listBytes: 1) == Limits.historyPageBytes)
        }
        #expect(request([#"{"op":"toggle","name":"a \"b\" \\ c"}"#]).likelyReply == .small, "other escapes")
    }

    /// One pass over each frame decides the guess: `history` in any frame wins over a list in
    /// an earlier one, and the list's size is asked only for a whole list.
    @Test func theLikelyReplyIsDecidedInOnePassAndAsksTheListOnlyForAList() {
        #expect(request([#"{"op":"list"}"#]).likelyReply == .wholeList)
        #expect(request(["x", #"{"op":"reset"}"#]).likelyReply == .wholeList)
        #expect(request([#"{"op":"list"}"#, #"{"op":"history"}"#]).likelyReply == .historyPage)
        #expect(request([#"{"op":"history"}"#, #"{"op":"list"}"#]).likelyReply == .historyPage)
        #expect(request([#"{"op":"toggle","name":"lis"}"#]).likelyReply == .small)
        #expect(request([]).likelyReply == .small)
        var asked = 0
        func listBytes() -> Int {
            asked += 1
            return 7
        }
        #expect(IncomingRequest.LikelyReply.small.estimatedBytes(listBytes: listBytes()) == 0)
        #expect(
            IncomingRequest.LikelyReply.historyPage.estimatedBytes(listBytes: listBytes())
                == Limits.historyPageBytes)
        #expect(asked == 0)
        #expect(IncomingRequest.LikelyReply.wholeList.estimatedBytes(listBytes: listBytes()) == 7)
        #expect(asked == 1)
    }

    /// A message off the ROUTER keeps its frames: the routing id and a REQ peer's delimiter are
    /// the envelope, the rest the body; a DEALER peer (no delimiter) has its first frame alone
    /// as the envelope.
    @Test func aMessageIsSplitIntoEnvelopeAndBody() {
        func split(_ frames: [String], properties: [String: String] = [:], authenticated: Bool = false)
            -> IncomingRequest
        {
            IncomingRequest(assembling(frames), properties: properties, authenticated: authenticated)
        }
        func text(_ frames: [Data]) -> [String] { frames.map { String(decoding: $0, as: UTF8.self) } }
        func text(_ frames: [[UInt8]]) -> [String] { frames.map { String(decoding: $0, as: UTF8.self) } }

        let fromREQ = split(["id", "", "body"])
        #expect(text(fromREQ.envelope) == ["id", ""] && text(fromREQ.body) == ["body"])
        let fromDEALER = split(["id", "body", "more"])
        #expect(text(fromDEALER.envelope) == ["id"] && text(fromDEALER.body) == ["body", "more"])
        let twoHops = split(["relay", "id", "", "body"])
        #expect(text(twoHops.envelope) == ["relay", "id", ""] && text(twoHops.body) == ["body"])
        let leadingEmpty = split(["", "body"])
        #expect(text(leadingEmpty.envelope) == [""] && text(leadingEmpty.body) == ["body"])
        // Only the first empty frame can be the delimiter: one in front makes it a DEALER's.
        let emptyTwice = split(["", "x", "", "body"])
        #expect(text(emptyTwice.envelope) == [""] && text(emptyTwice.body) == ["x", "", "body"])
        let long = String(repeating: "i", count: 40)
        let longID = split([long, "", "body"])
        #expect(text(longID.envelope) == [long, ""] && text(longID.body) == ["body"])
        let delimiterLast = split(["id", ""])
        #expect(text(delimiterLast.envelope) == ["id", ""] && delimiterLast.body.isEmpty)
        let nothing = split([])
        #expect(nothing.envelope.isEmpty && nothing.body.isEmpty)

        #expect(split(["id", "", "b"]).access == .readWrite, "without authentication")
        #expect(
            split(["id", "", "b"], properties: ["User-Id": "rw:K"], authenticated: true).access == .readWrite)
        #expect(
            split(["id", "", "b"], properties: ["User-Id": "ro:K"], authenticated: true).access == .readOnly)
        #expect(split(["id", "", "b"], authenticated: true).access == .readOnly, "no User-Id: the least")
    }

    /// The trace is read when the service was told when the request came, with the peer's
    /// address; otherwise it is a trace of nothing.
    @Test func theTraceCarriesThePeerOnlyWhenTimed() {
        let properties = ["Peer-Address": "10.0.0.7"]
        let untimed = IncomingRequest(
            assembling(["id", "", "{}"]), properties: properties, authenticated: false)
        #expect(untimed.trace.peer == nil && untimed.trace.received == nil)
        let now = ContinuousClock.now
        let timed = IncomingRequest(
            assembling(["id", "", "{}"]), properties: properties, authenticated: false, received: now)
        #expect(timed.trace.peer == "10.0.0.7" && timed.trace.received == now)
    }
}
