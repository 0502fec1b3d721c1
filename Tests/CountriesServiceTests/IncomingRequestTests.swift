import CountriesCore
import Foundation
import Testing

@testable import CountriesService

/// What the socket loop learns from a request before decoding it.
@Suite struct IncomingRequestTests {
    private func request(_ frames: [String]) -> IncomingRequest {
        IncomingRequest(envelope: [Data("peer".utf8), Data()], body: frames.map { Data($0.utf8) })
    }

    @Test func aHistoryRequestMayBeHistoryAndOthersNot() {
        #expect(request([#"{"op":"history","since":0}"#]).mayBeHistory)
        #expect(request(["history"]).mayBeHistory)
        #expect(request(["x", #"{"since":3,"op":"history"}"#]).mayBeHistory, "in any frame")
        #expect(request([String(repeating: "h", count: 70_000) + "history"]).mayBeHistory)
        #expect(!request([#"{"op":"toggle","index":1,"id":"a"}"#]).mayBeHistory)
        #expect(!request([#"{"op":"histor"}"#, "y"]).mayBeHistory)
        #expect(!request(["historhistorY"]).mayBeHistory)
        #expect(!request([]).mayBeHistory)
        #expect(!request([""]).mayBeHistory)
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
            for _ in 0..<2_000 where large.mayBeHistory { found += 1 }
        }
        #expect(found == 0)
        #expect(elapsed < .milliseconds(400), "\(elapsed) for 2,000 scans of 64 KiB")
    }

    /// The batch's byte budget guesses each reply before decoding: a page of history, a whole
    /// list for `list` and `reset`, nothing for the rest.
    @Test func repliesAreEstimatedForTheBatchBudget() {
        #expect(request([#"{"op":"list"}"#]).estimatedReplyBytes(listBytes: 9_000) == 9_000)
        #expect(request([#"{"op":"reset","id":"x"}"#]).estimatedReplyBytes(listBytes: 9_000) == 9_000)
        #expect(
            request([#"{"op":"history","since":0}"#]).estimatedReplyBytes(listBytes: 9_000)
                == Limits.historyPageBytes)
        #expect(request([#"{"op":"toggle","index":1}"#]).estimatedReplyBytes(listBytes: 9_000) == 0)
        #expect(request([#"{"op":"count"}"#]).estimatedReplyBytes(listBytes: 9_000) == 0)
    }
}
