import CountriesCore
import CountriesStore
import Foundation
import SystemSupport
import Testing

@testable import CountriesService

/// What a peer is answered by what the peers leave unread: its own bound, then all peers'
/// together (docs/RELIABILITY.md, "Bounds per peer").
@Suite struct ReplyAdmissionTests {
    private let bounds = ReplyAdmission.Bounds(perPeer: 1_000, inAll: 10_000, ofAReader: 100)

    private func decide(total: Int, peer: Int, _ likely: IncomingRequest.LikelyReply = .small)
        -> ReplyAdmission
    {
        ReplyAdmission.decide(totalUnread: total, peerUnread: { peer }, likely: { likely }, bounds: bounds)
    }

    @Test func belowEveryBoundAllIsAnsweredWithoutLookingUpThePeer() {
        var asked = 0
        let admission = ReplyAdmission.decide(
            totalUnread: 999,
            peerUnread: {
                asked += 1
                return 999
            },
            likely: {
                asked += 1
                return .wholeList
            },
            bounds: bounds)
        #expect(admission == .answer)
        #expect(asked == 0, "the loop asks this of every request: one comparison")
    }

    @Test func aPeerAtItsOwnBoundIsRefusedWhateverTheOthersHold() {
        guard case .refuse(let refusal) = decide(total: 1_000, peer: 1_000) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(refusal.code == .tooLarge)
        #expect(refusal.message.contains("1000 bytes of replies to this client are still unread"))
        #expect(decide(total: 5_000, peer: 999, .wholeList) == .answer, "all together under their bound")
    }

    /// Once all peers together hold their bound, a peer holding more than a reader's replies on
    /// their way gets nothing more: a refusal would be one more reply it does not read.
    @Test func atTheBoundInAllAPeerThatReadsNothingIsNotAnswered() {
        let reason =
            "the service holds 10000 bytes of replies its clients have not read (at most 10000), and this client more than 100 of them; it is answered again once it reads"
        #expect(decide(total: 10_000, peer: 101) == .drop(reason: reason))
        #expect(decide(total: 10_000, peer: 999, .wholeList) == .drop(reason: reason))
        #expect(decide(total: 9_999, peer: 999) == .answer, "under the bound in all")
    }

    /// Readers still get small replies (toggles go on); a big one waits until the others read.
    @Test func atTheBoundInAllReadersGetSmallRepliesAndBigOnesAreRefused() {
        #expect(decide(total: 10_000, peer: 0) == .answer)
        #expect(decide(total: 10_000, peer: 100) == .answer, "a reader's replies on their way")
        for likely in [IncomingRequest.LikelyReply.wholeList, .historyPage] {
            guard case .refuse(let refusal) = decide(total: 12_345, peer: 0, likely) else {
                Issue.record("expected a refusal of \(likely)")
                return
            }
            #expect(refusal.code == .tooLarge)
            #expect(
                refusal.message.contains("12345 bytes of replies its clients have not read (at most 10000)"))
            #expect(refusal.message.contains("nothing changed"))
        }
    }

    /// Through the handler: many peers that read nothing reach the bound in all; then the one
    /// that holds most is not answered, a reader's `list` is refused and its toggle is made.
    @Test func theHandlerAnswersReadersAndDropsThoseThatReadNothing() throws {
        let handler = try makeHandler(on: MemoryStore(seed: SeedList.standard))
        let unread = UnreadReplies()
        handler.unreadReplies = unread
        handler.replyBounds = bounds
        var held: [UnreadReplies.PeerBytes] = []
        for index in 0..<10 { held.append(unread.add(999, for: Data("silent-\(index)".utf8))) }
        #expect(unread.totalBytes == 9_990)
        let before = handler.handled([(peer: "silent-0", body: #"{"op":"count"}"#)])
        #expect(before.replies.count == 1, "under the bound in all")
        held.append(unread.add(10, for: Data("reader".utf8)))
        #expect(unread.totalBytes == 10_000)

        let countriesBefore = handler.state.countries
        let batch = handler.handled([
            (peer: "silent-1", body: #"{"op":"toggle","index":0}"#),
            (peer: "reader", body: #"{"op":"list"}"#),
            (peer: "reader", body: #"{"op":"toggle","index":1}"#),
        ])
        #expect(batch.replies.map(\.peer) == ["reader", "reader"], "silent-1 is not answered")
        let replies = try batch.decodedReplies()
        #expect(replies[0].error?.code == "too_large")
        #expect(replies[1].ok)
        #expect(handler.state.seq == 1, "one change: the reader's")
        #expect(handler.state.countries[0] == countriesBefore[0], "the dropped toggle changed nothing")
        #expect(handler.state.countries[1].visited != countriesBefore[1].visited)
        #expect(handler.tally.dropped == 1)

        for bytes in held.dropLast() { bytes.released(999) }
        let after = handler.handled([(peer: "silent-1", body: #"{"op":"list"}"#)])
        #expect(
            try after.decodedReplies().first?.countries?.count == SeedList.standard.count, "once they read")
    }
}
