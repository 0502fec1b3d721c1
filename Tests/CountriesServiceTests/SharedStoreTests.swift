import CountriesCore
import Foundation
import SystemSupport
import TestSupport
import Testing

@testable import CountriesService

/// The handler on a shared store: replicas take turns through the store's compare-and-swap,
/// a retry sent to another replica applies at most once and gets the first reply, and a
/// commit whose answer was lost is `unavailable`, never acknowledged (docs/HA.md, "Commits").
@Suite struct SharedStoreTests {
    private let seed = SeedList.standard

    /// Handles `bodies` as one batch on `handler`: its replies. A shared store's handler
    /// publishes nothing itself: the events come from the store's log.
    private func handle(_ handler: CommandHandler, _ bodies: [String]) throws -> [Reply] {
        let outcome = try handler.outcome(of: bodies)
        #expect(
            outcome.published.isEmpty,
            "a shared store's handler publishes from the store's log, not its commits")
        return outcome.replies
    }

    /// A change's reply names its store, and a refusal of `if_store` names the store the
    /// service runs on: a client of several endpoints tells another store's endpoint by it.
    @Test func changeRepliesNameTheirStore() throws {
        let log = SharedLog(seed: seed)
        let a = try makeHandler(on: SharedLogStore(log: log))
        let replies = try handle(
            a,
            [
                #"{"op":"toggle","name":"France","id":"n-1"}"#,
                #"{"op":"set","name":"France","visited":true}"#,
                #"{"op":"toggle","name":"France","if_store":"ffffffffffffffffffffffffffffffff"}"#,
                #"{"op":"toggle","name":"Atlantis"}"#,
            ])
        #expect(replies[0].store == log.identity && replies[0].seq == 1)
        #expect(replies[1].store == log.identity, "a no-op names its store too")
        #expect(replies[2].error?.code == "conflict" && replies[2].store == log.identity)
        #expect(replies[3].error?.code == "not_found" && replies[3].store == nil)
        // The retry gets the first reply, store and all.
        #expect(try handle(a, [#"{"op":"toggle","name":"France","id":"n-1"}"#]) == [replies[0]])
    }

    @Test func aReplicaBehindCatchesUpAndTakesTheNextSeq() throws {
        let log = SharedLog(seed: seed)
        let a = try makeHandler(on: SharedLogStore(log: log))
        let b = try makeHandler(on: SharedLogStore(log: log))
        #expect(try handle(a, [#"{"op":"toggle","name":"France","id":"a-1"}"#]).first?.seq == 1)
        // b still thinks the list is at seq 0: its commit is refused, it catches up, and runs
        // again.
        let replies = try handle(b, [#"{"op":"toggle","name":"France","id":"b-1"}"#])
        #expect(replies.first?.seq == 2)
        #expect(replies.first?.country?.visited == false, "b toggled France back, after a's toggle")
        #expect(log.events.map(\.seq) == [1, 2])
    }

    @Test func aRetryOnAnotherReplicaGetsTheFirstReply() throws {
        let log = SharedLog(seed: seed)
        let a = try makeHandler(on: SharedLogStore(log: log))
        let b = try makeHandler(on: SharedLogStore(log: log))
        let first = try handle(a, [#"{"op":"toggle","name":"Spain","id":"s-1"}"#])
        let retry = try handle(b, [#"{"op":"toggle","name":"Spain","id":"s-1"}"#])
        #expect(retry == first)
        let reused = try handle(b, [#"{"op":"remove","name":"Spain","id":"s-1"}"#])
        #expect(reused.first?.error?.code == "conflict")
        #expect(log.events.count == 1)
    }

    @Test func readsOnAReplicaBehindSeeEveryAcknowledgedChange() throws {
        let log = SharedLog(seed: seed)
        let a = try makeHandler(on: SharedLogStore(log: log))
        let b = try makeHandler(on: SharedLogStore(log: log))
        _ = try handle(a, [#"{"op":"toggle","name":"Italy"}"#, #"{"op":"toggle","name":"Spain"}"#])
        let read = try handle(b, [#"{"op":"get","name":"Spain"}"#])
        #expect(read.first?.seq == 2)
        #expect(read.first?.country?.visited == true)
    }

    @Test func aLostAnswerIsUnavailableAndTheRetryGetsTheCommittedReply() throws {
        let log = SharedLog(seed: seed)
        let storeA = SharedLogStore(log: log)
        let a = try makeHandler(on: storeA)
        let b = try makeHandler(on: SharedLogStore(log: log))
        storeA.fault = .answerLost
        let lost = try handle(a, [#"{"op":"toggle","name":"Italy","id":"i-1"}"#])
        #expect(lost.first?.error?.code == "unavailable")
        #expect(log.events.count == 1, "the commit did reach the log")
        let retry = try handle(b, [#"{"op":"toggle","name":"Italy","id":"i-1"}"#])
        #expect(retry.first?.seq == 1)
        #expect(log.events.count == 1, "and the retry did not apply it twice")

        storeA.fault = .beforeCommit
        let refused = try handle(a, [#"{"op":"toggle","name":"Italy","id":"i-2"}"#])
        #expect(refused.first?.error?.code == "storage_error")
        #expect(log.events.count == 1)
    }

    /// Outcomes without an id, on a replica that has not seen another's change yet: each is
    /// decided on the store's state, confirmed by the commit, never on the replica's stale copy
    /// (a no-op and a refusal skipped the store, so a `set` lost an acknowledged write, an
    /// `if_seq` conflicted falsely and a just-added name was not found).
    @Test func aNoOpOrARefusalIsDecidedOnTheStoresStateNotTheReplicasCopy() throws {
        let log = SharedLog(seed: seed)
        let a = try makeHandler(on: SharedLogStore(log: log))
        let b = try makeHandler(on: SharedLogStore(log: log))

        #expect(try handle(a, [#"{"op":"set","name":"France","visited":true}"#]).first?.seq == 1)
        let set = try #require(try handle(b, [#"{"op":"set","name":"France","visited":false}"#]).first)
        #expect(set.seq == 2, "b's copy said France was not visited: \(set)")
        #expect(try handle(a, [#"{"op":"get","name":"France"}"#]).first?.country?.visited == false)

        let acknowledged = try #require(try handle(a, [#"{"op":"toggle","name":"Italy"}"#]).first?.seq)
        let guarded = try #require(
            try handle(b, [#"{"op":"toggle","name":"Spain","if_seq":\#(acknowledged)}"#]).first)
        #expect(guarded.ok && guarded.seq == acknowledged + 1, "no false conflict: \(guarded)")

        #expect(try handle(a, [#"{"op":"add","name":"Narnia"}"#]).first?.ok == true)
        let added = try #require(try handle(b, [#"{"op":"toggle","name":"Narnia"}"#]).first)
        #expect(added.ok && added.country?.visited == true, "b found the name a added: \(added)")

        // A refusal that stays a refusal on the newest state is still confirmed there.
        let before = log.events.count
        #expect(try handle(a, [#"{"op":"set","name":"Narnia","visited":false}"#]).first?.ok == true)
        let refused = try #require(
            try handle(b, [#"{"op":"toggle","name":"Narnia","if_seq":\#(log.seq - 1)}"#]).first)
        #expect(refused.error?.code == "conflict", "\(refused)")
        #expect(refused.error?.message.contains("\(log.seq)") == true, "told the current seq: \(refused)")
        #expect(log.events.count == before + 1)
    }

    /// Four clients, two replicas, random faults: each client sends toggles with fresh ids,
    /// retrying on the other replica after anything but a success.
    @Test(arguments: 0..<6) func randomFailoverKeepsSeqsContiguousAndEachChangeOnce(seed number: UInt64)
        throws
    {
        var random = SplitMix64(seed: number)
        let log = SharedLog(seed: seed)
        let stores = [SharedLogStore(log: log), SharedLogStore(log: log)]
        let replicas = try stores.map { try makeHandler(on: $0) }
        var acknowledged: [String: Reply] = [:]
        var nextID = 0
        for _ in 0..<200 {
            for store in stores {
                let roll = Int.random(in: 0..<10, using: &random)
                store.fault = roll == 0 ? .answerLost : roll == 1 ? .beforeCommit : .none
            }
            let replica = Int.random(in: 0..<2, using: &random)
            var bodies: [(id: String, body: String)] = []
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                nextID += 1
                let id = "c-\(nextID)"
                let index = Int.random(in: 0..<3, using: &random)
                bodies.append((id, #"{"op":"toggle","index":\#(index),"id":"\#(id)"}"#))
            }
            var replies = try handle(replicas[replica], bodies.map(\.body))
            // Every one that did not succeed is retried once on the other replica, fault-free.
            stores[1 - replica].fault = .none
            for (position, reply) in replies.enumerated() where !reply.ok {
                replies[position] = try handle(replicas[1 - replica], [bodies[position].body])[0]
            }
            for (request, reply) in zip(bodies, replies) {
                #expect(reply.ok, "\(request.id): \(reply)")
                acknowledged[request.id] = reply
            }
        }
        // Contiguous, unique seqs; one event per id; every acknowledged reply is in the log.
        #expect(log.events.map(\.seq) == (0..<UInt64(log.events.count)).map { $0 + 1 })
        #expect(log.requests.count == acknowledged.count)
        for (id, reply) in acknowledged {
            let remembered = try #require(log.requests[id])
            #expect(try Reply.decode(Data(remembered.reply)) == reply, "\(id)")
            let seq = try #require(reply.seq)
            guard case .changed(let row) = log.events[Int(seq) - 1].kind else {
                Issue.record("seq \(seq) is not a toggle")
                continue
            }
            #expect(row == reply.country, "seq \(seq), id \(id)")
        }
        for replica in replicas {
            #expect(try replica.state == log.state(upTo: replica.state.seq))
        }
    }
}
