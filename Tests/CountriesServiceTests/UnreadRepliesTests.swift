import CountriesCore
import Foundation
import SystemSupport
import Testing

@testable import CountriesService

/// What one peer may leave unread is counted in bytes, and the handler refuses a peer past it
/// while it answers everyone else (docs/RELIABILITY.md, "Bounds per peer").
@Suite struct UnreadRepliesTests {
    private func request(_ body: String, from peer: String) -> IncomingRequest {
        IncomingRequest(envelope: [Data(peer.utf8), Data()], body: [Array(body.utf8)])
    }

    @Test func bytesAreCountedPerPeerAndForgottenWhenTaken() {
        let unread = UnreadReplies()
        let peer = Data("a".utf8)
        let first = unread.add(100, for: peer)
        let second = unread.add(50, for: peer)
        unread.add(7, for: Data("b".utf8))
        #expect(unread.unread(by: peer) == 150)
        first.released(100)
        second.released(50)
        #expect(unread.unread(by: peer) == 0)
        #expect(unread.peers == 1, "a peer with nothing in flight is not counted")
        #expect(unread.totalBytes == 7)
    }

    /// Releases come from libzmq's I/O threads while the loop adds; the table forgets peers with
    /// nothing in flight as it grows, and never one with bytes still to come back.
    @Test func releasesFromOtherThreadsAndManyPeersKeepTheCountsExact() async {
        let unread = UnreadReplies()
        let held = unread.add(1_000, for: Data("held".utf8))
        var pending: [(UnreadReplies.PeerBytes, Int)] = []
        for index in 0..<5_000 {
            let peer = Data("peer-\(index % 700)".utf8)
            pending.append((unread.add(index % 13 + 1, for: peer), index % 13 + 1))
            if pending.count == 64 {
                let batch = pending
                pending = []
                await Task.detached { for (counted, bytes) in batch { counted.released(bytes) } }.value
            }
        }
        for (counted, bytes) in pending { counted.released(bytes) }
        #expect(unread.totalBytes == 1_000)
        #expect(unread.peers == 1)
        #expect(unread.unread(by: Data("held".utf8)) == 1_000)
        #expect(unread.unread(by: Data("peer-1".utf8)) == 0)
        held.released(1_000)
        #expect(unread.totalBytes == 0)
    }

    /// The peer counted last is found again without the table; its count stays the table's
    /// while sweeps forget the peers around it.
    @Test func thePeerCountedLastKeepsOneCountAcrossSweeps() {
        let unread = UnreadReplies()
        let peer = Data("a".utf8)
        let first = unread.add(10, for: peer)
        for index in 0..<1_000 {
            unread.add(1, for: Data("other-\(index)".utf8)).released(1)
            #expect(unread.add(2, for: peer) === first, "one count per peer, after \(index) others")
        }
        #expect(unread.unread(by: peer) == 2_010)
        #expect(unread.totalBytes == 2_010)
        first.released(2_010)
        for index in 0..<200 { unread.add(1, for: Data("later-\(index)".utf8)).released(1) }
        let again = unread.add(5, for: peer)
        #expect(unread.unread(by: peer) == 5)
        again.released(5)
        #expect(unread.totalBytes == 0)
    }

    /// The loop's check of each request: below the bound for all peers together no peer can
    /// have reached it, and 0 is the answer without a look-up; from there on, the peer's own.
    @Test func aPeerIsLookedUpOnlyOnceAllPeersTogetherReachTheBound() {
        let unread = UnreadReplies()
        let peer = Data("a".utf8)
        unread.add(600, for: peer)
        let other = unread.add(399, for: Data("b".utf8))
        #expect(unread.unread(by: peer, ifAllReach: 1_000) == 0, "999 bytes in all")
        #expect(unread.add(1, for: Data("b".utf8)) === other, "one count per peer")
        #expect(unread.unread(by: peer, ifAllReach: 1_000) == 600)
        #expect(unread.unread(by: Data("b".utf8), ifAllReach: 1_000) == 400)
        other.released(400)
        #expect(unread.unread(by: peer, ifAllReach: 601) == 0)
        #expect(unread.unread(by: peer, ifAllReach: 600) == 600)
    }

    @Test func aPeerPastTheBoundIsRefusedAndOthersAreAnswered() throws {
        let handler = try CommandHandler(
            store: MemoryStore(seed: SeedList.standard), seed: SeedList.standard,
            logger: Logger(level: .error) { _ in }
        ) { CommandHandler.StatusInfo(version: "t", uptimeSeconds: 0, endpoints: []) }
        let unread = UnreadReplies()
        handler.unreadReplies = unread
        handler.replyBounds = ReplyAdmission.Bounds(perPeer: 1_000, inAll: .max, ofAReader: .max)
        unread.add(999, for: Data("slow".utf8))
        let under = handler.handle([request(#"{"op":"list"}"#, from: "slow")])
        unread.add(1, for: Data("slow".utf8))
        let replies = handler.handle([
            request(#"{"op":"toggle","index":0}"#, from: "slow"), request(#"{"op":"count"}"#, from: "other"),
        ])
        guard case .reply(_, let listed)? = under.first, case .reply(_, let refused)? = replies.first,
            case .reply(_, let counted)? = replies.last
        else {
            Issue.record("expected replies: \(under) \(replies)")
            return
        }
        #expect(try Reply.decode(Data(listed)).countries?.count == SeedList.standard.count, "under the bound")
        let refusal = try Reply.decode(Data(refused))
        #expect(refusal.error?.code == "too_large")
        #expect(
            refusal.error?.message.contains("1000 bytes of replies to this client are still unread") == true)
        #expect(handler.state.seq == 0, "nothing changed")
        #expect(try Reply.decode(Data(counted)).count == SeedList.standard.count)
    }

    @Test func aListIsEncodedOncePerSeq() throws {
        let handler = try CommandHandler(
            store: MemoryStore(seed: SeedList.standard), seed: SeedList.standard,
            logger: Logger(level: .error) { _ in }
        ) { CommandHandler.StatusInfo(version: "t", uptimeSeconds: 0, endpoints: []) }
        let bodies = handler.handle([
            request(#"{"op":"list"}"#, from: "a"), request(#"{"op":"list"}"#, from: "b"),
            request(#"{"op":"toggle","index":1}"#, from: "a"), request(#"{"op":"list"}"#, from: "b"),
        ]).compactMap { outgoing -> Data? in
            if case .reply(_, let body) = outgoing { return Data(body) }
            return nil
        }
        #expect(bodies.count == 4)
        #expect(bodies[0] == bodies[1])
        #expect(try Reply.decode(bodies[3]).seq == 1, "a new seq is a new list")
        #expect(try Reply.decode(bodies[3]).countries?[1].visited == true)
        #expect(handler.estimatedListBytes == bodies[3].count, "exact once encoded")
        #expect(handler.served == 4)
    }

    /// Counting unread replies must not end group commit: the changes of a batch still share
    /// one commit (the check once committed them one by one).
    @Test func aBatchOfChangesIsStillOneCommit() throws {
        let store = FailingStore(seed: SeedList.standard)
        let handler = try CommandHandler(
            store: store, seed: SeedList.standard, logger: Logger(level: .error) { _ in }
        ) { CommandHandler.StatusInfo(version: "t", uptimeSeconds: 0, endpoints: []) }
        handler.unreadReplies = UnreadReplies()
        handler.replyBounds = ReplyAdmission.Bounds(perPeer: 1 << 20, inAll: 1 << 30, ofAReader: 1 << 10)
        let replies = handler.handle(
            (0..<3).map { request(#"{"op":"toggle","index":\#($0)}"#, from: "peer-\($0)") })
        #expect(replies.count == 6, "three replies and three events")
        #expect(store.commits == 1)
    }
}
