import CountriesCore
import Foundation
import SystemSupport
import Testing

@testable import CountriesService

/// Requests that arrive together are committed together, answered in arrival order, and reads
/// in the batch see the writes before them.
@Suite struct GroupCommitTests {
    @Test func twoHundredPipelinedRequestsFromADealerAreAllAnsweredInOrder() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let dealer = try service.commandSocket(.dealer)
        let events = try service.subscriber()

        // 150 adds, 50 toggles of the seed's rows, sent at once, REQ-style (empty delimiter).
        var bodies: [Data] = []
        for number in 0..<150 {
            bodies.append(
                Request(id: "add-\(number)", command: .change(.add(name: "Land \(number)"))).encoded())
        }
        for number in 0..<50 {
            bodies.append(
                Request(id: "toggle-\(number)", command: .change(.toggle(.index(number % 8)))).encoded())
        }
        for body in bodies {
            #expect(try dealer.send([Data(), body]))
        }
        var seqs: [UInt64] = []
        for number in 0..<bodies.count {
            let frames = try #require(try dealer.receive(), "reply \(number + 1) of \(bodies.count)")
            #expect(frames.count == 2)
            #expect(frames.first == Data(), "the envelope's delimiter comes back")
            let reply = try RawReply(frames[1]).reply
            #expect(reply.ok)
            if number < 150 { #expect(reply.country?.name == "Land \(number)") }
            seqs.append(reply.seq ?? 0)
        }
        #expect(seqs == Array(1...200), "seqs are contiguous and replies in arrival order")

        var expected = CountriesState(countries: SeedList.standard)
        for body in bodies {
            guard case .change(let change) = try Request.decode(body).command else { continue }
            _ = try expected.apply(change, seed: SeedList.standard)
        }
        #expect(try service.snapshot() == expected)

        // Every change was published, in order.
        for seq in 1...UInt64(200) {
            let event = try #require(try nextEvent(events), "event \(seq)")
            #expect(try event.event().seq == seq)
        }
    }

    @Test func aReadAfterWritesInTheSamePipelineSeesThem() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let dealer = try service.commandSocket(.dealer)

        let bodies = [
            #"{"op":"add","name":"Fiji"}"#, #"{"op":"toggle","name":"Fiji"}"#, #"{"op":"get","name":"fiji"}"#,
            #"{"op":"count"}"#, #"{"op":"remove","index":0}"#, #"{"op":"history","since":0}"#,
        ]
        for body in bodies {
            #expect(try dealer.send([Data(body.utf8)]))
        }
        var replies: [Reply] = []
        for _ in bodies {
            let frames = try #require(try dealer.receive())
            #expect(frames.count == 1, "no delimiter sent, none returned")
            replies.append(try RawReply(frames[0]).reply)
        }
        #expect(replies[2].country == IndexedCountry(index: 8, name: "Fiji", visited: true))
        #expect(replies[2].seq == 2)
        #expect(replies[3].count == 9)
        #expect(replies[5].events?.map(\.seq) == [1, 2, 3])
    }

    /// The handler alone, so the batch is certainly one batch.
    @Test func handlerBatchKeepsArrivalOrderAndReadsSeeEarlierWrites() throws {
        let store = try SQLiteStore(path: nil, seed: SeedList.standard)
        let handler = try makeHandler(on: store)
        let bodies = [
            #"{"op":"toggle","index":2}"#, "junk", #"{"op":"add","name":"Laos","id":"a"}"#,
            #"{"op":"add","name":"Laos","id":"a"}"#, #"{"op":"nope"}"#, #"{"op":"get","name":"Laos"}"#,
            #"{"op":"toggle","index":99}"#, #"{"op":"count"}"#,
        ]
        let batch = handler.handled(bodies.enumerated().map { ("peer-\($0.offset)", $0.element) })
        let replies = try batch.decodedReplies()
        #expect(
            batch.replies.map(\.peer) == (0..<bodies.count).map { "peer-\($0)" }, "replies in arrival order")
        #expect(
            replies.map(\.error?.code) == [
                nil, "bad_request", nil, nil, "unknown_op", nil, "index_out_of_range", nil,
            ])
        #expect(replies[3] == replies[2], "a retry inside the batch gets the first reply")
        #expect(replies[5].country == IndexedCountry(index: 8, name: "Laos", visited: false))
        #expect(replies[7].count == 9)
        #expect(batch.published == [1, 2])
        #expect(handler.state.seq == 2)
        #expect(try store.loadState() == handler.state)
    }
}
