import CountriesCore
import Etcd
import Foundation
import SystemSupport
import TestSupport
import Testing

@testable import CountriesReplication
@testable import CountriesService
@testable import CountriesStore

/// No list wedges the etcd store (docs/HA.md, "Limits"): the largest list seeds, snapshots and
/// resets through etcd's default 1.5 MiB request limit; a batch over the per-transaction budget
/// is committed in parts and a change that cannot fit is refused alone, saying by how much; a
/// full etcd (NOSPACE) is `storage_error` with what to do, and `status` says it.
@Suite(.serialized, .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct EtcdSizeTests {
    /// 10,000 names of 100 four-byte characters: about 4.2 MB of JSON, the largest list.
    private var largestSeed: [Country] {
        longestNames(count: 10_000, characters: 100, scalars: 100).map { Country(name: $0, visited: false) }
    }

    @Test func theLargestListSeedsSnapshotsAndResetsUnderEtcdsRequestLimit() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let seed = largestSeed
        let store = try cluster.replicaStore(prefix: "/big/", seed: seed)
        let a = try makeHandler(on: store, seed: seed)
        #expect(a.state.count == 10_000)
        var replies: [Reply] = []
        // Across 100, 200 and 300: toggles in batches, resets (one at 199 -> 200), a remove and
        // an add, each crossing's snapshot written apart, in chunks.
        for round in 0..<12 {
            var bodies = (0..<9).map {
                #"{"op":"toggle","index":\#((round * 9 + $0) % 50),"id":"t-\#(round)-\#($0)"}"#
            }
            if round % 5 == 3 { bodies.append(#"{"op":"reset","id":"r-\#(round)"}"#) }
            replies += try a.replies(to: bodies)
        }
        let last = try #require(seed.last?.name)
        replies += try a.replies(
            to: [
                #"{"op":"remove","name":"\#(last)","id":"rm"}"#,
                #"{"op":"add","name":"\#(last)","id":"add"}"#,
            ])
        // A refusal ends a loop: its seq would never come (the loop spun for ever once).
        func toggle(_ index: Int, until seq: UInt64) throws {
            while a.state.seq < seq, !replies.contains(where: { $0.error != nil }) {
                replies += try a.replies(to: [#"{"op":"toggle","index":\#(index)}"#])
            }
        }
        try toggle(7, until: 199)
        replies += try a.replies(to: [#"{"op":"reset","id":"r-199"}"#, #"{"op":"toggle","index":1}"#])
        try toggle(3, until: 310)
        let refusals = replies.compactMap(\.error?.message)
        try #require(refusals.isEmpty, "\(refusals.prefix(3))")
        #expect(store.waitForSnapshot(within: .seconds(60) * testSlowdown))
        #expect(store.knownSnapshotSeq == 300)
        // A replica started now reads the same list from the snapshot and the events after it,
        // and a retried reset gets its first reply, list and all.
        let restarted = try cluster.replicaStore(prefix: "/big/", seed: [])
        let same = try restarted.loadState() == a.state
        #expect(same, "the list read at start is not the list committed")
        let retry = try makeHandler(on: restarted, seed: []).replies(to: [#"{"op":"reset","id":"r-199"}"#])
        #expect(retry.first?.seq == 200 && retry.first?.countries?.count == 10_000)
        // The log holds markers, not lists: the history of the reset is the reset to the seed.
        let events = try #require(try restarted.events(after: 199, currentSeq: 200))
        let isTheReset = events.first?.kind == .reset(CountriesState(countries: seed).rows)
        #expect(isTheReset, "event 200 is not the reset to the seed")
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let stored = try client.range(EtcdRangeRequest(key: EtcdLayout(prefix: "/big/").event(200)))
        #expect((stored.kvs.first?.value.count ?? .max) < 100)
    }

    @Test func aBatchOverTheBudgetIsCommittedInPartsAndAChangeTooBigAloneIsRefusedAlone() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let seed = SeedList.standard
        let long = longestNames(count: 8, characters: 100, scalars: 400)
        let adds = long.enumerated().map { #"{"op":"add","name":"\#($0.element)","id":"a-\#($0.offset)"}"# }
        // Eight adds of 1,600-byte names, with their requests and replies, take about 50 KB.
        let roomy = try makeHandler(
            on:
                try cluster.replicaStore(prefix: "/parts/", seed: seed, budget: 16 * 1024), seed: seed)
        let replies = try roomy.replies(to: adds)
        #expect(replies.map(\.seq) == (1...8).map { UInt64($0) }, "\(replies.compactMap(\.error?.message))")
        // One such add alone is over 4 KiB: refused, saying by how much; the others commit.
        let tight = try makeHandler(
            on: try cluster.replicaStore(prefix: "/tight/", seed: seed, budget: 4 * 1024), seed: seed)
        let mixed = try tight.replies(
            to: [#"{"op":"toggle","index":0}"#, adds[0], #"{"op":"toggle","index":1}"#])
        #expect(mixed[0].seq == 1 && mixed[2].seq == 2)
        #expect(mixed[1].error?.code == "too_large")
        let message = mixed[1].error?.message ?? ""
        #expect(
            message.contains("over the budget of 4096 bytes per transaction")
                && message.contains("nothing changed"))
        print("tooLarge: \(message)")
    }

    /// The snapshot is written apart from the commits, and may fail: no commit trims an event
    /// after the newest snapshot its replica knows, so the state can always be read. Here no
    /// snapshot is ever written (the batches carry no state), through more than the 10,000
    /// events a store keeps.
    @Test func noEventAfterTheNewestKnownSnapshotIsTrimmed() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let seed = SeedList.standard
        let store = try cluster.replicaStore(prefix: "/trim/", seed: seed)
        var state = try store.loadState()
        while state.seq < UInt64(Limits.retainedEvents) + 50 {
            var batch = StoreBatch()
            batch.basis = state.seq
            for step in 0..<EtcdStore.changesPerCommit {
                var result = try state.apply(.toggle(.index(step % seed.count)), seed: seed)
                result.event?.store = store.identity
                batch.events.append(try #require(result.event))
            }
            try store.commit(batch)
        }
        #expect(store.knownSnapshotSeq == 0)
        #expect(try store.oldestRetainedSeq(currentSeq: state.seq) == 1)
        let read = try cluster.replicaStore(prefix: "/trim/", seed: seed).loadState()
        #expect(read == state)
    }

    /// Old events are trimmed from where the last trim ended, not from the prefix's start (a
    /// delete from there walks every deleted event etcd keeps until it compacts): what stays is
    /// about the last 10,000, and a new process trims once from the start what an earlier one
    /// left below them.
    @Test func trimsKeepTheLastEventsAndANewProcessTrimsWhatIsLeftBelow() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let seed = SeedList.standard
        let prefix = "/trimmed/"
        var state = CountriesState(countries: seed)
        func commit(_ store: EtcdStore) throws {
            var batch = StoreBatch()
            batch.basis = state.seq
            for step in 0..<EtcdStore.changesPerCommit {
                var result = try state.apply(.toggle(.index(step % seed.count)), seed: seed)
                result.event?.store = store.identity
                batch.events.append(try #require(result.event))
            }
            batch.state = state
            try store.commit(batch)
        }
        let first = try cluster.replicaStore(prefix: prefix, seed: seed)
        // Every snapshot at once: the trims here follow them (a second between writes kept the
        // first at seq 128 for the whole loop on a fast run).
        first.snapshotSpacing = .zero
        state = try first.loadState()
        let retained = UInt64(Limits.retainedEvents)
        var earlier = state
        while state.seq < retained + retained / 2 {
            try commit(first)
            if state.seq <= retained + retained / 2 - 2_500 { earlier = state }
        }
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let layout = EtcdLayout(prefix: prefix)
        // Every commit here is an entry of the log with a full batch of events.
        let entries = try client.range(.prefix(layout.eventsPrefix, countOnly: true)).count
        let kept = UInt64(entries) * UInt64(EtcdStore.changesPerCommit)
        // The last 10,000, and those after the newest snapshot the writer knew (written apart).
        #expect(kept >= retained && kept <= retained + 1_000, "\(kept) events kept")
        let oldest = try first.oldestRetainedSeq(currentSeq: state.seq)
        #expect(oldest > retained / 2 - 1_000)
        #expect(try first.events(after: oldest - 1, currentSeq: state.seq, limit: 100)?.count == 100)
        #expect(try first.events(after: oldest - 2, currentSeq: state.seq, limit: 100) == nil)
        // Catching up over more than one page of events (pages end at a seq, not the log's end).
        #expect(state.seq - earlier.seq > UInt64(EtcdEventLog.eventsPerPage) * 2)
        #expect(try first.catchUp(earlier) == state)
        // An event left below the kept ones (as by a process that died between two trims).
        _ = try client.txn(compare: [], success: [.put(layout.event(3), Data("{}".utf8))], failure: [])
        try commit(first)
        // A look starts where the last one ended (no event is written below the newest): the
        // first process does not see it; a new one does, and trims it.
        #expect(try first.oldestRetainedSeq(currentSeq: state.seq) >= oldest)
        let second = try cluster.replicaStore(prefix: prefix, seed: seed)
        second.snapshotSpacing = .zero
        // A look stands for its interval (`status` asks for it often): the trim is seen only
        // by a look after it.
        second.oldestLookInterval = .seconds(3_600)
        #expect(try second.oldestRetainedSeq(currentSeq: state.seq) == 3)
        #expect(try second.loadState() == state)
        try commit(second)
        #expect(try second.oldestRetainedSeq(currentSeq: state.seq) == 3)
        second.oldestLookInterval = .zero
        #expect(try second.oldestRetainedSeq(currentSeq: state.seq) > retained / 2 - 1_000)
    }

    /// A seeder's chunks go in before its seeding transaction: one that died in between leaves
    /// chunks that neither keep the prefix from being seeded nor stay once the store exists.
    @Test func aSeederThatDiedHalfWayNeitherBlocksTheStoreNorLeavesItsChunks() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let blob = EtcdLayout(prefix: "/dead/").seedBlob
        let orphan = Data(repeating: 0x61, count: 1000)
        _ = try blob.writeChunks(orphan, token: StoreIdentity.make(), seq: 0, client: client)
        let store = try cluster.replicaStore(prefix: "/dead/", seed: SeedList.standard)
        #expect(store.seeded)
        #expect(try client.range(.prefix(blob.chunksPrefix, keysOnly: true)).kvs.count == 1)
        // One that found the prefix empty, then lost to another and died before deleting its own.
        _ = try blob.writeChunks(orphan, token: StoreIdentity.make(), seq: 0, client: client)
        let second = try cluster.replicaStore(prefix: "/dead/", seed: SeedList.standard)
        #expect(!second.seeded && second.storedSeed == SeedList.standard)
        #expect(try client.range(.prefix(blob.chunksPrefix, keysOnly: true)).kvs.count == 1)
    }

    @Test func aFullEtcdIsStorageErrorSayingWhatToDoAndStatusShowsIt() throws {
        let cluster = try EtcdCluster(members: 1, arguments: ["--quota-backend-bytes", String(16 << 20)])
        defer { cluster.stop() }
        let seed = SeedList.standard
        let a = try makeHandler(on: try cluster.replicaStore(prefix: "/full/", seed: seed), seed: seed)
        #expect(try a.replies(to: [#"{"op":"toggle","index":0}"#]).first?.ok == true)
        // Junk under another prefix until etcd raises its NOSPACE alarm.
        let client = EtcdClient(endpoints: cluster.clientURLs, timeout: .seconds(10) * testSlowdown)
        let junk = Data(repeating: 0x6A, count: 1 << 20)
        var full = false
        for index in 0..<64 where !full {
            do {
                _ = try client.txn(compare: [], success: [.put("/junk/\(index)", junk)], failure: [])
            } catch {
                full = "\(error)".contains("database space exceeded")
            }
        }
        try #require(full, "etcd never said its database was full")
        let refused = try a.replies(to: [#"{"op":"toggle","index":1}"#, #"{"op":"status"}"#])
        #expect(refused[0].error?.code == "storage_error")
        let message = refused[0].error?.message ?? ""
        #expect(message.contains("nothing changed") && message.contains("etcd's database is full"))
        #expect(message.contains("etcdctl alarm disarm") && message.contains("--quota-backend-bytes"))
        #expect(refused[1].status?.etcdSpace?.contains("alarm NOSPACE") == true)
        print("noSpace: \(message)")
    }
}
