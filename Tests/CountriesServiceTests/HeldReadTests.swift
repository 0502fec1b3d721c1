import CountriesCore
import CountriesStore
import Foundation
import SystemSupport
import Testing

@testable import CountriesService

/// Reads in a batch wait for the batch's commit instead of ending it: a read among changes
/// neither splits their grouped commit nor, on a shared store, costs a read of its own, since
/// the commit's compare vouches for the state (docs/HA.md, "Reads"). 200 reads a second on the
/// writer of a replicated store halved the rate of 16 writing clients when each read committed
/// the changes before it and then read etcd (docs/BENCHMARKS.md, "Stop 63").
@Suite struct HeldReadTests {
    private let seed = SeedList.standard

    private func reply(of peer: String, in replies: [(peer: String, reply: Reply)]) throws -> Reply {
        try #require(replies.first { $0.peer == peer }?.reply, "no reply to \(peer)")
    }

    @Test func aReadAmongChangesTakesNoCommitOrReadOfItsOwn() throws {
        let store = SharedLogStore(log: SharedLog(seed: seed))
        let replica = try makeHandler(on: store)
        let replies = try replica.replies(to: [
            ("a", #"{"op":"toggle","name":"France","id":"a-1"}"#), ("r", #"{"op":"count"}"#),
            ("s", #"{"op":"status"}"#), ("b", #"{"op":"toggle","name":"Spain","id":"b-1"}"#),
            ("g", #"{"op":"get","name":"France"}"#),
        ])
        #expect(store.commits == 1, "one grouped commit, not one per read")
        #expect(store.catchUps == 0, "the commit's compare vouched for the state")
        #expect(replies.map(\.peer) == ["a", "b", "r", "s", "g"], "reads after the commit")
        // Answered after the commit: the read sees the change that came after it too, which
        // was under way when it was answered.
        #expect(try reply(of: "r", in: replies).seq == 2)
        #expect(try reply(of: "s", in: replies).seq == 2)
        #expect(try reply(of: "s", in: replies).status?.visited == 3)
        #expect(try reply(of: "g", in: replies).country?.visited == true)
    }

    /// Held for the change after it, a read on a replica behind is answered from the state
    /// the refused commit's events and the second commit made: every acknowledged change.
    @Test func aReadBeforeAChangeOnAReplicaBehindSeesWhatTheOtherReplicaAcknowledged() throws {
        let log = SharedLog(seed: seed)
        let other = try makeHandler(on: SharedLogStore(log: log))
        _ = try other.replies(to: [("o", #"{"op":"toggle","name":"Italy","id":"o-1"}"#)])
        let store = SharedLogStore(log: log)
        let behind = try makeHandler(on: store)
        _ = try other.replies(to: [("o", #"{"op":"toggle","name":"Spain","id":"o-2"}"#)])

        let replies = try behind.replies(to: [
            ("r", #"{"op":"get","name":"Spain"}"#), ("a", #"{"op":"toggle","name":"France","id":"a-1"}"#),
        ])
        #expect(try reply(of: "a", in: replies).seq == 3)
        let read = try reply(of: "r", in: replies)
        #expect(read.seq == 3 && read.country?.visited == true, "\(read)")
        #expect(store.catchUps == 0, "the refusal brought the events it missed")
    }

    @Test func readsAloneCatchUpOnceABatch() throws {
        let log = SharedLog(seed: seed)
        let other = try makeHandler(on: SharedLogStore(log: log))
        let store = SharedLogStore(log: log)
        let behind = try makeHandler(on: store)
        _ = try other.replies(to: [("o", #"{"op":"toggle","name":"Italy"}"#)])
        let replies = try behind.replies(to: [
            ("r", #"{"op":"count"}"#), ("s", #"{"op":"get","name":"Italy"}"#),
        ])
        #expect(store.catchUps == 1 && store.commits == 0)
        #expect(replies.map(\.reply.seq) == [1, 1])
        #expect(try reply(of: "s", in: replies).country?.visited == true)
    }

    /// A batch of no-ops and refusals writes nothing: its compare is a read, which etcd 3.4 was
    /// seen to answer from behind, so the reads held for it catch up as reads alone do.
    @Test func aCommitThatWroteNothingLeavesTheReadsToCatchUp() throws {
        let store = SharedLogStore(log: SharedLog(seed: seed))
        let replica = try makeHandler(on: store)
        let replies = try replica.replies(to: [
            ("a", #"{"op":"set","name":"France","visited":false}"#), ("r", #"{"op":"count"}"#),
        ])
        #expect(try reply(of: "a", in: replies).ok)
        #expect(try reply(of: "r", in: replies).seq == 0)
        #expect(store.commits == 1 && store.catchUps == 1)
    }

    @Test func aFailedCommitLeavesTheReadsToCatchUp() throws {
        let store = SharedLogStore(log: SharedLog(seed: seed))
        let replica = try makeHandler(on: store)
        store.fault = .beforeCommit
        let replies = try replica.replies(to: [
            ("a", #"{"op":"toggle","name":"France","id":"a-1"}"#), ("r", #"{"op":"count"}"#),
        ])
        #expect(try reply(of: "a", in: replies).error?.code == "storage_error")
        #expect(try reply(of: "r", in: replies).seq == 0)
        #expect(store.catchUps == 1)
    }

    /// A catch-up that fails takes up to 30 ms on etcd (three reads): asked once a batch, not
    /// once a read, and every read of the batch gets its refusal.
    @Test func aCatchUpThatFailsIsAskedOnceABatch() throws {
        let store = SharedLogStore(log: SharedLog(seed: seed))
        let replica = try makeHandler(on: store)
        store.catchUpFails = true
        let replies = try replica.replies(to: [
            #"{"op":"count"}"#, #"{"op":"list"}"#, #"{"op":"get","index":0}"#,
        ])
        #expect(replies.map(\.error?.code) == ["storage_error", "storage_error", "storage_error"])
        #expect(store.catchUps == 1)
        store.catchUpFails = false
        #expect(try replica.replies(to: [#"{"op":"count"}"#]).first?.ok == true, "the next batch asks again")
    }

    /// A DEALER may send a read and then a change: its replies come in the order it asked.
    @Test func aPeersRepliesKeepTheOrderOfItsRequests() throws {
        let store = SharedLogStore(log: SharedLog(seed: seed))
        let replica = try makeHandler(on: store)
        let replies = try replica.replies(to: [
            ("a", #"{"op":"toggle","name":"Spain","id":"a-1"}"#), ("d", #"{"op":"count"}"#),
            ("d", #"{"op":"toggle","name":"France","id":"d-1"}"#), ("d", #"{"op":"count"}"#),
        ])
        let mine = replies.filter { $0.peer == "d" }.map(\.reply)
        #expect(mine.count == 3)
        #expect(mine.map(\.seq) == [1, 2, 2], "\(mine)")
        #expect(mine[0].count == 8 && mine[1].country?.name == "France" && mine[2].count == 8)
    }

    /// On a store of this process's own (SQLite), a read among changes does not end their
    /// group commit either: the read after them sees both, one commit made.
    @Test func aReadAmongChangesOnALocalStoreKeepsTheirGroupCommit() throws {
        let store = try SQLiteStore(path: nil, seed: seed)
        let local = try makeHandler(on: store)
        let replies = try local.replies(to: [
            ("a", #"{"op":"toggle","name":"France"}"#), ("r", #"{"op":"get","name":"France"}"#),
            ("b", #"{"op":"toggle","name":"Spain"}"#),
        ])
        #expect(replies.map(\.peer) == ["a", "b", "r"])
        #expect(try reply(of: "r", in: replies).seq == 2)
        #expect(try reply(of: "r", in: replies).country?.visited == true)
        #expect(local.state.seq == 2)
    }
}
