import CountriesCore
import Etcd
import Foundation
import SystemSupport
import TestSupport
import Testing

@testable import CountriesReplication
@testable import CountriesStore

/// The etcd store against a real etcd member: seeding once, the snapshot cadence, the event
/// window, and the request-id memory kept to the protocol's window (docs/HA.md).
@Suite(.serialized, .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct EtcdStoreTests {
    private let logger = Logger(level: .error) { _ in }

    private func open(
        _ cluster: EtcdCluster, prefix: String, window: RequestIDWindow = RequestIDWindow(),
        health: ClusterHealth = ClusterHealth(quorumTimeout: .seconds(5)),
        requestTimeout: Duration = .seconds(1)
    ) throws -> EtcdStore {
        var configuration = EtcdConfiguration(endpoints: cluster.clientURLs, prefix: prefix, replicaName: "t")
        configuration.requestTimeout = requestTimeout
        return try EtcdStore(
            configuration: configuration, seed: SeedList.standard, health: health, logger: logger,
            window: window)
    }

    /// Commits toggles of the first three rows as one batch on a new store: the state after.
    private func commitThreeToggles(_ store: EtcdStore) throws -> CountriesState {
        var state = try store.loadState()
        var batch = StoreBatch()
        batch.basis = state.seq
        for step in 0..<3 {
            var result = try state.apply(.toggle(.index(step)), seed: SeedList.standard)
            result.event?.store = store.identity
            batch.events.append(try #require(result.event))
        }
        batch.state = state
        try store.commit(batch)
        return state
    }

    /// Commits a toggle of row `index` after `state`, as a batch of its own.
    private func commitToggle(_ index: Int, after state: inout CountriesState, to store: EtcdStore) throws {
        var batch = StoreBatch()
        batch.basis = state.seq
        var result = try state.apply(.toggle(.index(index)), seed: SeedList.standard)
        result.event?.store = store.identity
        batch.events.append(try #require(result.event))
        batch.state = state
        try store.commit(batch)
    }

    /// Keys put under the event log by anyone who can write under the prefix.
    enum ForgedKeys: CaseIterable, Sendable {
        /// One entry keyed far past the committed seq.
        case onePastTheCommittedSeq
        /// More than a page (500) of them.
        case pagesPastTheCommittedSeq
        /// More than a page of keys that name no seq (not the canonical 20 digits), where the
        /// next commit's entry goes.
        case pagesThatAreNoSeq
        /// A key that is not UTF-8 there: every read and watch of the log failed on it.
        case aKeyThatIsNotUTF8
    }

    /// The event tail took an entry far past the committed seq for a gap of trimmed events,
    /// published it, and dropped every later commit as handed over already; now it is not
    /// published, and the next commit is. A page of keys it skips (past the committed seq, or
    /// no seq) was read again and again, for ever, since the next page started where that one
    /// had: now each page starts after the last key of the one before.
    @Test(arguments: ForgedKeys.allCases)
    func keysForgedInTheLogAreNeverPublished(_ forgedKeys: ForgedKeys) throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let health = ClusterHealth(quorumTimeout: .seconds(5))
        let store = try open(cluster, prefix: "/forged/", health: health)
        var state = try commitThreeToggles(store)
        let layout = EtcdLayout(prefix: "/forged/")
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let row = IndexedCountry(index: 0, name: SeedList.standard[0].name, visited: true)
        // Each an entry of events whose seqs are its key's, as a commit would write it.
        func entry(_ seq: UInt64) -> (key: String, value: Data) {
            let event = Event(seq: seq, kind: .changed(row), store: store.identity)
            return (layout.event(seq), EtcdLayout.encodeEntry([event.encoded()]))
        }
        let forged: [(key: String, value: Data)] =
            switch forgedKeys {
            case .onePastTheCommittedSeq: [entry(state.seq + 1_000)]
            case .pagesPastTheCommittedSeq: (0..<600).map { entry(state.seq + 1_000 + UInt64($0)) }
            case .pagesThatAreNoSeq:
                (0..<600).map { (entry(state.seq + 1).key + "x\($0)", entry(state.seq + 1).value) }
            case .aKeyThatIsNotUTF8: []
            }
        if forgedKeys == .aKeyThatIsNotUTF8 {
            // Our client takes keys as text; etcdctl, through a shell, puts the byte 0xFF.
            let put = try ChildProcess.run(
                "/bin/sh",
                [
                    "-c", #"ETCDCTL_API=3 etcdctl --endpoints "$1" put "$2$(printf '\377')" junk"#, "sh",
                    cluster.clientURLs[0], entry(state.seq + 1).key,
                ],
                environment: ProcessInfo.processInfo.environment)
            try #require(put.exitCode == 0, "\(put)")
        }
        for part in stride(from: 0, to: forged.count, by: 100) {
            _ = try client.txn(
                compare: [],
                success: forged[part..<min(part + 100, forged.count)].map { .put($0.key, $0.value) },
                failure: [])
        }
        let configuration = EtcdConfiguration(
            endpoints: cluster.clientURLs, prefix: "/forged/", replicaName: "t")
        let tail = try EventTail(
            configuration: configuration, after: state.seq, seed: SeedList.standard, health: health,
            logger: logger)
        tail.start()
        defer { tail.stop() }

        try commitToggle(4, after: &state, to: store)
        var seqs: [UInt64] = []
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        while !seqs.contains(state.seq), ContinuousClock.now < deadline {
            seqs += tail.drain().map(\.event.seq)
            usleep(10_000)
        }
        #expect(seqs == [state.seq], "the commit after the forged keys, and nothing else")
    }

    /// The service's loop busy (it drains nothing): the tail stops reading once its bound of
    /// bytes waits, and goes on, in order and losing nothing, once they are taken. Unbounded, a
    /// loop that stalls while others commit held every event the tail read.
    @Test func aTailWhoseEventsAreNotTakenStopsReadingAtItsBound() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let health = ClusterHealth(quorumTimeout: .seconds(5))
        let store = try open(cluster, prefix: "/bound/", health: health)
        var state = try store.loadState()
        let start = state.seq
        let configuration = EtcdConfiguration(
            endpoints: cluster.clientURLs, prefix: "/bound/", replicaName: "t")
        let tail = try EventTail(
            configuration: configuration, after: start, seed: SeedList.standard, health: health,
            logger: logger, queuedBytesLimit: 1_000)
        tail.start()
        defer { tail.stop() }
        // The tail is watching once it has handed over a first commit: the next come by the
        // watch, a few at a time, not in one page read at its start.
        try commitToggle(0, after: &state, to: store)
        #expect(eventually(within: .seconds(10)) { tail.queuedBytes > 0 })
        // About 120 bytes an event: 500 of them are about 60 KB.
        for index in 0..<500 { try commitToggle(index % 8, after: &state, to: store) }
        #expect(eventually(within: .seconds(10)) { tail.queuedBytes >= 1_000 })
        Thread.sleep(forTimeInterval: 0.5)
        let held = tail.queuedBytes
        // Its bound, and what the hand-over that crossed it added (a watch response: the
        // commits made while the tail was busy with the one before).
        #expect(held <= 20_000, "\(held) bytes waiting")
        var seqs: [UInt64] = []
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        while seqs.last != state.seq, ContinuousClock.now < deadline {
            seqs += tail.drain().map(\.event.seq)
            usleep(5_000)
        }
        #expect(seqs == Array(start + 1...state.seq), "every event, once and in order")
        #expect(tail.queuedBytes == 0)
    }

    /// A key under the log that names no seq (not the canonical 20 digits) is not part of it
    /// (docs/HA.md), as the tail already skipped it: a catch-up and a history read skip it
    /// too. Taken for damage, one such key put by hand stopped every replica's catch-up.
    @Test func keysThatNameNoSeqAreNotPartOfTheLog() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let store = try open(cluster, prefix: "/foreign/")
        let seed = CountriesState(countries: SeedList.standard)
        var state = try commitThreeToggles(store)
        let layout = EtcdLayout(prefix: "/foreign/")
        _ = try EtcdClient(endpoints: cluster.clientURLs).txn(
            compare: [],
            success: [
                .put(layout.event(state.seq) + "x", Data("not an event".utf8)),
                .put(layout.eventsPrefix + "zzz", Data("not an event".utf8)),
            ],
            failure: [])
        try commitToggle(4, after: &state, to: store)

        let replica = try open(cluster, prefix: "/foreign/")
        #expect(try replica.catchUp(seed) == state)
        #expect(try replica.events(after: 0, currentSeq: state.seq, limit: 10)?.map(\.seq) == [1, 2, 3, 4])
    }

    /// A seq known committed whose events never come (a `seq` key raised by hand, read by the
    /// quorum probe) is a lag no member ends: the tail leaves the member it watches, reads the
    /// log again and watches another, and then waits before it does so again. It did so at
    /// once, every time: a range, a watch and a warning as fast as etcd answered.
    @Test func aLagNoMemberEndsIsLeftAgainOnlyAfterAPause() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let health = ClusterHealth(quorumTimeout: .seconds(5))
        let store = try open(cluster, prefix: "/lag/", health: health)
        let state = try commitThreeToggles(store)
        let warnings = Box<[String]>([])
        let configuration = EtcdConfiguration(
            endpoints: cluster.clientURLs, prefix: "/lag/", replicaName: "t")
        let tail = try EventTail(
            configuration: configuration, after: state.seq, seed: SeedList.standard, health: health,
            logger: Logger(level: .warning) { line in warnings.update { $0.append(line) } })
        tail.start()
        defer { tail.stop() }
        health.recordQuorum(seq: state.seq + 5)
        let window = Duration.seconds(3) * testSlowdown
        Thread.sleep(forTimeInterval: Double(window / .milliseconds(1)) / 1000)
        let leaves = warnings.value.filter { $0.contains("delivered nothing after seq") }.count
        // Pauses of 100, 200, ... ms, then a second: about 9 leaves in 3 s, 17 in 12 s.
        #expect(leaves >= 1, "the tail never left: \(warnings.value.prefix(3))")
        #expect(leaves <= 25, "\(leaves) leaves in \(window)")
    }

    /// The oldest kept event is looked for in windows that double, from the last found. A
    /// current seq far past the log (a `seq` key raised by hand near 2^63) made them go on for
    /// days, about 9 * 10^12 ranges, on the service's thread: now some windows, then one range.
    @Test func theOldestKeptIsFoundInBoundedTimeWhateverTheCurrentSeq() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let answer = Box<Result<UInt64, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            // A store belongs to the thread that uses it.
            answer.value = Result {
                try open(cluster, prefix: "/far/").oldestRetainedSeq(currentSeq: UInt64(Int64.max))
            }
            done.signal()
        }.start()
        try #require(
            done.wait(timeout: .now() + 30.0 * Double(testSlowdown)) == .success,
            "still looking after 30 s (the store and its thread are left to the cluster's stop)")
        #expect(try answer.value?.get() == UInt64(Int64.max) + 1, "no event is kept")
    }

    /// The tail reads the committed seq, then the log at that revision, and its watch goes on
    /// after it. It went on after a page's own revision (etcd's newest): a commit made between
    /// the two reads was neither read nor watched, and was published only when a later commit
    /// showed the gap, or once the watchdog took its member for hung.
    @Test func theLogIsReadAtTheSeqsRevisionAndWatchedAfterIt() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let health = ClusterHealth(quorumTimeout: .seconds(5))
        let store = try open(cluster, prefix: "/revision/", health: health)
        var state = try commitThreeToggles(store)
        let layout = EtcdLayout(prefix: "/revision/")
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let head = try client.range(EtcdRangeRequest(key: layout.seq))
        let committed = try layout.seqValue(in: head)
        try commitToggle(4, after: &state, to: store)

        let configuration = EtcdConfiguration(
            endpoints: cluster.clientURLs, prefix: "/revision/", replicaName: "t")
        let tail = try EventTail(
            configuration: configuration, after: 0, seed: SeedList.standard, health: health, logger: logger)
        var handedOver: UInt64 = 0
        let revision = try tail.readLog(
            after: &handedOver, committed: committed, at: head.revision, client: client)
        #expect(revision == head.revision, "the watch goes on after the revision the log was read at")
        #expect(handedOver == committed)
        #expect(tail.drain().map(\.event.seq) == Array(1...committed))
    }

    /// A read on a replica catches up first: caught up, as it nearly always is, that costs one
    /// range of etcd (a range to the page's end found nothing and needed a second look past it);
    /// behind by a few events, one range as well; and a replica that knows of events more than
    /// a page ahead reads pages, as before.
    @Test func aCaughtUpCatchUpIsOneRange() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let health = ClusterHealth(quorumTimeout: .seconds(5))
        let store = try open(cluster, prefix: "/ranges/", health: health)
        let state = try commitThreeToggles(store)
        let seed = CountriesState(countries: SeedList.standard)

        func ranges(_ body: () throws -> Void) throws -> Int {
            let before = try cluster.handledRequests("Range")
            try body()
            return try cluster.handledRequests("Range") - before
        }
        var caughtUp = seed
        #expect(try ranges { caughtUp = try store.catchUp(state) } == 1)
        #expect(caughtUp == state)
        caughtUp = seed
        #expect(try ranges { caughtUp = try store.catchUp(seed) } == 1)
        #expect(caughtUp == state)
        // Newer events known (here falsely): a page ending at its end, then a look past it,
        // for each of the catch-up's reads, and the read refused.
        health.recordQuorum(seq: 5_000)
        var refused = false
        let spent = try ranges {
            do {
                _ = try store.catchUp(state)
            } catch {
                refused = true
            }
        }
        #expect(refused, "behind seq 5,000")
        #expect(spent == 2 * EtcdStore.catchUpReads)
    }

    /// A catch-up never ends below a seq the replica knows is committed (the quorum probe's):
    /// an answer from a member behind is read again and then refused, not served.
    @Test func aCatchUpBehindAKnownCommittedSeqIsRefused() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let health = ClusterHealth(quorumTimeout: .seconds(5))
        let store = try open(cluster, prefix: "/behind/", health: health)
        let state = try commitThreeToggles(store)
        let seed = CountriesState(countries: SeedList.standard)

        // The probe read seq 3: every catch-up reaches it.
        health.recordQuorum(seq: 3)
        #expect(try store.catchUp(seed) == state)
        // It read seq 4, which etcd does not hold here: as an answer from behind would be.
        health.recordQuorum(seq: 4)
        do {
            _ = try store.catchUp(seed)
            Issue.record("a catch-up ending at seq 3 was served although seq 4 is known committed")
        } catch {
            #expect(error.description.contains("end at seq 3, behind seq 4"), "\(error)")
        }
    }

    /// A replay at a revision reads every page at that revision: etcd answers each page with its
    /// newest revision, and the pages after the first must not move to it (a start read the
    /// snapshot at that revision).
    @Test func aReplayAtARevisionStaysThereAcrossPages() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let store = try open(cluster, prefix: "/pages/")
        var state = try store.loadState()
        let pages = EtcdEventLog.eventsPerPage / EtcdStore.changesPerCommit + 2
        var commits = 0
        func commitAPage() throws {
            commits += 1
            let ids = (0..<EtcdStore.changesPerCommit).map { "page-\(commits)-\($0)" }
            try store.commit(try Self.changing(ids, on: &state, store: store.identity))
        }
        for _ in 0..<pages { try commitAPage() }
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let layout = EtcdLayout(prefix: "/pages/")
        let then = try client.range(EtcdRangeRequest(key: layout.seq))
        let seqThen = try #require(
            then.kvs.first.flatMap { UInt64(String(decoding: $0.value, as: UTF8.self)) })
        #expect(seqThen > UInt64(EtcdEventLog.eventsPerPage))
        for _ in 0..<2 { try commitAPage() }
        let seed = CountriesState(countries: SeedList.standard)
        let log = EtcdEventLog(
            client: client, layout: layout, seedRows: seed.rows,
            health: ClusterHealth(quorumTimeout: .seconds(5)))
        var replayed = seed
        #expect(try log.replay(into: &replayed, atRevision: then.revision))
        #expect(replayed.seq == seqThen, "replayed to seq \(replayed.seq), not the revision's \(seqThen)")
    }

    @Test func theFirstReplicaSeedsAndTheOthersFindTheSameStore() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let first = try open(cluster, prefix: "/a/")
        let second = try open(cluster, prefix: "/a/")
        let other = try open(cluster, prefix: "/b/")
        #expect(first.seeded && !second.seeded && other.seeded)
        #expect(first.identity == second.identity && first.identity != other.identity)
        #expect(try second.loadState() == CountriesState(countries: SeedList.standard))
    }

    /// Prefixes may not nest, whichever store comes first: a store inside another's prefix
    /// would have its keys read and deleted as the outer one's events and ids.
    @Test func nestedPrefixesAreRefusedEitherWay() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        _ = try open(cluster, prefix: "/ov/")
        #expect {
            try open(cluster, prefix: "/ov/events/")
        } throws: {
            "\($0)".contains(
                "a countries store lives at the prefix /ov/ (its key /ov/store), and /ov/events/ is inside it"
            )
        }
        _ = try open(cluster, prefix: "/in/events/")
        #expect {
            try open(cluster, prefix: "/in/")
        } throws: {
            "\($0)".contains("the prefix /in/ holds keys but no store (/in/events/")
        }
        // Beside each other is fine, and so is a second replica of each.
        _ = try open(cluster, prefix: "/ov2/")
        _ = try open(cluster, prefix: "/ov/")
    }

    /// 250 toggles in batches: the state read back (snapshot plus the events after it) is the
    /// state committed, and a stale basis is refused as `moved`.
    @Test func commitsSnapshotsAndAStaleBasisIsMoved() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let store = try open(cluster, prefix: "/c/")
        var state = try store.loadState()
        for round in 0..<50 {
            var batch = StoreBatch()
            batch.basis = state.seq
            for step in 0..<5 {
                var result = try state.apply(.toggle(.index((round + step) % 8)), seed: SeedList.standard)
                result.event?.store = store.identity
                batch.events.append(try #require(result.event))
            }
            batch.state = state
            try store.commit(batch)
        }
        #expect(state.seq == 250)
        #expect(try store.loadState() == state)
        #expect(try store.catchUp(CountriesState(countries: SeedList.standard)) == state)
        // Each batch is one entry of the log: `history` from inside one starts at the seq asked.
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let layout = EtcdLayout(prefix: "/c/")
        #expect(try client.range(.prefix(layout.eventsPrefix, countOnly: true)).count == 50)
        let middle = try #require(try store.events(after: 7, currentSeq: state.seq, limit: 10))
        #expect(middle.map(\.seq) == Array(8...17))
        #expect(try store.events(after: 243, currentSeq: 248, limit: 100)?.map(\.seq) == Array(244...248))

        var behind = CountriesState(countries: SeedList.standard)
        let stale = try Self.changing(["x"], on: &behind, store: store.identity)
        #expect(throws: StateStoreError.self) { try store.commit(stale) }
        do {
            try store.commit(stale)
        } catch {
            #expect(error.code == .moved)
            // What moved it came back with the refusal, every entry's events in order.
            #expect(error.newerEvents.map(\.seq) == Array(1...250))
        }
    }

    /// A replica further behind than the kept events and a page of a replay beyond them finds
    /// nothing in its first page: that is a log trimmed past it, not the newest state, so it
    /// catches up from the snapshot. (It once took the empty page for the newest, and a replica
    /// left behind so lost every commit's compare from then on.)
    @Test func aReplicaBehindEveryKeptEventCatchesUpFromTheSnapshot() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let behind = try open(cluster, prefix: "/far/")
        let stale = try behind.loadState()
        let writer = try open(cluster, prefix: "/far/")
        var state = try writer.loadState()
        let layout = EtcdLayout(prefix: "/far/")
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let firstPage = EtcdRangeRequest(
            key: layout.event(1), rangeEnd: layout.event(UInt64(EtcdEventLog.eventsPerPage) + 1),
            countOnly: true)
        var batch = 0
        let kept = Limits.retainedEvents + EtcdEventLog.eventsPerPage + 2 * Int(EtcdStore.snapshotInterval)
        // Until the trims (which follow the snapshots, written apart) took the replay's first page.
        repeat {
            try #require(batch < 2 * kept / 32)
            // Past what the trims keep, the snapshot is waited for: its thread, a second apart at
            // most and starved on a loaded machine, once fell 22,000 events behind this loop, and
            // the next commit's trim needs one past the first page.
            if batch * 32 > kept { #expect(writer.waitForSnapshot(within: .seconds(30) * testSlowdown)) }
            try writer.commit(
                Self.changing((0..<32).map { "far-\(batch)-\($0)" }, on: &state, store: writer.identity))
            batch += 1
        } while try client.range(firstPage).count > 0
        #expect(state.seq > UInt64(Limits.retainedEvents + EtcdEventLog.eventsPerPage))
        let caughtUp = try behind.catchUp(stale)
        #expect(caughtUp.seq == state.seq)
        #expect(caughtUp == state)
    }

    /// A store from before entries kept an event a key, also for a commit of several changes.
    /// A replica of this version reads such a log as entries of one (start, catch-up, `history`
    /// from inside what was one commit), and its own commits then go on as entries.
    @Test func aLogOfAnEventAKeyReadsAsItIsAndGoesOnInEntries() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let prefix = "/older/"
        let seed = CountriesState(countries: SeedList.standard)
        let store = try open(cluster, prefix: prefix)
        // Five changes committed as a replica before entries did: a key each, then the seq.
        var state = seed
        let older = try Self.changing((1...5).map { "old-\($0)" }, on: &state, store: store.identity)
        let layout = EtcdLayout(prefix: prefix)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        _ = try client.txn(
            compare: [],
            success: older.events.map { .put(layout.event($0.seq), $0.encoded()) } + [
                .put(layout.seq, Data("5".utf8))
            ],
            failure: [])
        let restarted = try open(cluster, prefix: prefix)
        #expect(try restarted.loadState() == state)
        #expect(try restarted.catchUp(seed) == state)
        #expect(try restarted.events(after: 2, currentSeq: 5, limit: 10)?.map(\.seq) == [3, 4, 5])
        // Its own commit of three changes is one entry after them.
        try restarted.commit(
            try Self.changing(["new-1", "new-2", "new-3"], on: &state, store: store.identity))
        #expect(try client.range(.prefix(layout.eventsPrefix, countOnly: true)).count == 6)
        #expect(try open(cluster, prefix: prefix).loadState() == state)
        #expect(try restarted.events(after: 4, currentSeq: 8, limit: 10)?.map(\.seq) == [5, 6, 7, 8])
    }

    /// The generation's key is written only when one opens; how full it is, each replica counts
    /// from the id log, other replicas' entries included: the commit after another replica
    /// filled it opens the next one.
    @Test func aReplicaCountsAnotherReplicasIDsTowardTheWindow() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let window = RequestIDWindow(minimumAge: .zero, minimumCount: 10)
        let first = try open(cluster, prefix: "/w/", window: window)
        let second = try open(cluster, prefix: "/w/", window: window)
        var state = try first.loadState()
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let keyBefore = try client.range(EtcdRangeRequest(key: "/w/ids-generation")).kvs.first
        try first.commit(try Self.changing((0..<10).map { "first-\($0)" }, on: &state, store: first.identity))
        let keyAfter = try client.range(EtcdRangeRequest(key: "/w/ids-generation")).kvs.first
        #expect(keyAfter?.modRevision == keyBefore?.modRevision, "a commit that opens none leaves the key")
        #expect(first.generation.number == 1 && second.generation.number == 1)
        try second.commit(try Self.changing(["second"], on: &state, store: second.identity))
        #expect(second.generation.number == 2, "the first replica's 10 ids filled generation 1")
        let opened = try #require(
            try client.range(EtcdRangeRequest(key: "/w/ids-generation")).kvs.first.flatMap {
                RequestIDWindow.Generation($0.value)
            })
        #expect(opened.number == 2 && opened.count == 0 && opened.firstSeq == 11)
        #expect(try second.rememberedRequest(for: "first-3") != nil)
    }

    /// The window is kept by the commits: ids go into generations, each commit's ids are one
    /// entry of the id log, checked against what the replica knows, and the commit that opens a
    /// generation deletes the entries of the one before the previous. So the last
    /// `minimumCount` ids are always remembered, and no more than two generations are kept.
    @Test func requestIDsAreKeptByGenerationsInTheCommits() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let window = RequestIDWindow(minimumAge: .zero, minimumCount: 10, maximumCount: 25)
        let store = try open(cluster, prefix: "/r/", window: window)
        var state = try store.loadState()
        #expect(store.generation.number == 1)
        for id in 0..<100 {
            try store.commit(try Self.changing(["id-\(id)"], on: &state, store: store.identity))
            for kept in max(0, id - 9)...id {
                #expect(
                    try store.rememberedRequest(for: "id-\(kept)")?.reply
                        == Array("{\"n\":\"id-\(kept)\"}".utf8))
            }
        }
        #expect(try store.rememberedRequest(for: "id-0") == nil, "the oldest generations are gone")
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let kept = try client.range(EtcdRangeRequest.prefix("/r/idlog/", countOnly: true)).count
        #expect(kept <= 2 * 10 + 1, "at most two generations: \(kept) entries of one id each")
        #expect(try client.range(EtcdRangeRequest.prefix("/r/ids/", countOnly: true)).count == 0)
        // A remembered id is refused, with its first reply.
        var again = state
        Self.expectRemembered(
            ["id-99"], committing: try Self.changing(["id-99"], on: &again, store: store.identity), on: store,
            "a remembered id was written again")
        // So is the id of a refusal or no-op, which is checked but not written: on this
        // replica's stale copy, the retry of a committed change may decide "not found".
        var refusal = StoreBatch()
        refusal.basis = state.seq
        refusal.checkedIDs = ["id-98", "never-used"]
        Self.expectRemembered(
            ["id-98"], committing: refusal, on: store, "a refusal under a remembered id stood")
        refusal.checkedIDs = ["never-used"]
        try store.commit(refusal)
        #expect(try store.rememberedRequest(for: "never-used") == nil, "a refusal's id is not remembered")
    }

    /// Another replica's ids reach this one's memory on every way it can learn of them: read at
    /// start, read on the way to a newer basis, and read back by a commit the seq compare
    /// refused. None of them is applied twice.
    @Test func anIDAnotherReplicaCommittedIsNeverAppliedAgain() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let first = try open(cluster, prefix: "/o/")
        var firstState = try first.loadState()
        try first.commit(try Self.changing(["before"], on: &firstState, store: first.identity))
        let second = try open(cluster, prefix: "/o/")
        var secondState = try second.loadState()
        // Read at start.
        var retry = secondState
        #expect(throws: StateStoreError.self) {
            try second.commit(try Self.changing(["before"], on: &retry, store: second.identity))
        }
        // Committed by the first after the second read its ids; the second's state is behind:
        // the seq compare refuses it, and the refusal's reads teach it the id.
        try first.commit(try Self.changing(["stale"], on: &firstState, store: first.identity))
        retry = secondState
        Self.expectRemembered(
            ["stale"], committing: try Self.changing(["stale"], on: &retry, store: second.identity),
            on: second,
            "a change was committed on a stale basis")
        // Committed by the first; the second caught up first: its memory reads the entry on the
        // way to the basis.
        try first.commit(try Self.changing(["caught"], on: &firstState, store: first.identity))
        secondState = try second.catchUp(secondState)
        #expect(secondState == firstState)
        retry = secondState
        Self.expectRemembered(
            ["caught"], committing: try Self.changing(["caught"], on: &retry, store: second.identity),
            on: second,
            "an id another replica committed was applied again")
        try second.commit(try Self.changing(["fresh"], on: &secondState, store: second.identity))
        #expect(try first.rememberedRequest(for: "fresh") != nil)
    }

    /// A replica far behind reads the id log's entries it has not seen page by page
    /// (``EtcdIDMemory/pageSize`` at a time): the ids of the first page and of the last are both
    /// known before it commits.
    @Test func aReplicaFarBehindReadsTheIDLogPageByPage() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let first = try open(cluster, prefix: "/p/")
        let second = try open(cluster, prefix: "/p/")
        var firstState = try first.loadState()
        let count = EtcdIDMemory.pageSize + EtcdIDMemory.pageSize / 2
        for id in 0..<count {
            try first.commit(try Self.changing(["p-\(id)"], on: &firstState, store: first.identity))
        }
        var secondState = try second.catchUp(try second.loadState())
        Self.expectRemembered(
            ["p-0", "p-\(count - 1)"],
            committing: try Self.changing(
                ["p-0", "new", "p-\(count - 1)"], on: &secondState, store: second.identity),
            on: second, "ids another replica committed were applied again")
    }

    /// An entry of the id log that does not decode (someone else wrote it): the replica cannot
    /// check ids, so it does not start, and says which key and what to do.
    @Test func aDamagedIDLogEntryIsNamedNotSkipped() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let store = try open(cluster, prefix: "/d/")
        var state = try store.loadState()
        try store.commit(try Self.changing(["a"], on: &state, store: store.identity))
        let client = EtcdClient(endpoints: cluster.clientURLs)
        _ = try client.txn(
            compare: [], success: [.put("/d/idlog/00000000000000000001", Data("\u{1b}[2Jnot an entry".utf8))],
            failure: [])
        #expect {
            try open(cluster, prefix: "/d/")
        } throws: {
            let text = "\($0)"
            return text.contains("the key /d/idlog/00000000000000000001 in etcd holds")
                && text.contains("not an entry of the id log") && !text.contains("\u{1b}")
        }
    }

    /// Entries no commit wrote, put by anyone who can write under the prefix: a key that is
    /// not a seq's, a seq past the committed one, an entry of a generation past the current one
    /// at a seq whose commit remembered no id. Each claims generation 1000; taken, a replica
    /// starting afterwards forgot every live id and applied a retry twice. None is taken, and
    /// the ids committed are still checked, also through the memory's later reads.
    @Test func idLogEntriesNoCommitWroteAreNotTaken() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let store = try open(cluster, prefix: "/f/")
        var state = try store.loadState()
        try store.commit(try Self.changing(["a"], on: &state, store: store.identity))
        try commitToggle(3, after: &state, to: store)  // seq 2, no id: no entry
        let forged = EtcdLayout.encodeIDLogEntry(
            generation: 1_000,
            [(RememberedRequest(id: "forged", request: nil, reply: Array(#"{"ok":true,"seq":2}"#.utf8)), nil)]
        )
        let client = EtcdClient(endpoints: cluster.clientURLs)
        for key in [
            "/f/idlog/x", "/f/idlog/+5", "/f/idlog/00000000000000000099", "/f/idlog/00000000000000000002",
        ] {
            _ = try client.txn(compare: [], success: [.put(key, forged)], failure: [])
        }
        let restarted = try open(cluster, prefix: "/f/")
        var restartedState = try restarted.catchUp(try restarted.loadState())
        Self.expectRemembered(
            ["a"], committing: try Self.changing(["a"], on: &restartedState, store: restarted.identity),
            on: restarted, "an id committed before the forged entries was applied again")
        // The running store reads the log on from what it knew: the same.
        Self.expectRemembered(
            ["a"], committing: try Self.changing(["b", "a"], on: &state, store: store.identity),
            on: store, "an id committed before the forged entries was applied again by the running store")
    }

    /// A store from before generations (ids at `requests/<id>`, no generation key): its ids are
    /// generation 0, still checked, and forgotten only when generation 2 opens.
    @Test func idsFromBeforeGenerationsAreStillChecked() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        _ = try open(cluster, prefix: "/l/")
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let old = RememberedRequest(id: "old", request: nil, reply: Array(#"{"ok":true,"seq":1}"#.utf8))
        _ = try client.txn(
            compare: [],
            success: [
                .deleteRange(key: "/l/ids-generation", rangeEnd: nil),
                .put("/l/requests/old", EtcdLayout.encode(old)),
            ], failure: [])
        let window = RequestIDWindow(minimumAge: .zero, minimumCount: 2, maximumCount: 5)
        let store = try open(cluster, prefix: "/l/", window: window)
        var state = try store.loadState()
        #expect(store.generation.number == 0)
        #expect(try store.rememberedRequest(for: "old") == old)
        var again = state
        let batch = try Self.changing(["old"], on: &again, store: store.identity)
        do {
            try store.commit(batch)
            Issue.record("an id remembered before generations was written again")
        } catch {
            #expect(error.code == .moved && error.remembered == [old])
        }
        for id in 0..<12 {
            try store.commit(try Self.changing(["new-\(id)"], on: &state, store: store.identity))
        }
        #expect(store.generation.number >= 2)
        #expect(try store.rememberedRequest(for: "old") == nil)
        #expect(try client.range(EtcdRangeRequest.prefix("/l/requests/", countOnly: true)).count == 0)
    }

    /// A store from before the id log (a four-field generation, an id per key): the first
    /// replica of this version writes the generation in the log's form, which replicas of the
    /// version before cannot read or match (so none of them commits an id after it), and still
    /// checks the ids in their keys until their generation is gone.
    @Test func aStoreFromBeforeTheIDLogKeepsItsIDsAndFencesOlderReplicas() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        _ = try open(cluster, prefix: "/m/")
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let kept = RememberedRequest(
            id: "kept", request: Array(#"{"index":1,"op":"toggle"}"#.utf8), reply: Array(#"{"ok":true}"#.utf8)
        )
        let legacy = "1 \(RequestIDWindow.nowMilliseconds) 1 40"
        _ = try client.txn(
            compare: [],
            success: [
                .put("/m/ids-generation", Data(legacy.utf8)), .put("/m/ids/1/kept", EtcdLayout.encode(kept)),
            ], failure: [])
        let window = RequestIDWindow(minimumAge: .zero, minimumCount: 2, maximumCount: 5)
        let store = try open(cluster, prefix: "/m/", window: window)
        let value = try #require(
            try client.range(EtcdRangeRequest(key: "/m/ids-generation")).kvs.first?.value)
        #expect(String(decoding: value, as: UTF8.self) == legacy + " 0 0")
        // What a replica of the version before compares when it commits an id: no longer there.
        let older = try client.txn(
            compare: [.value("/m/ids-generation", equals: Data(legacy.utf8))], success: [], failure: [])
        #expect(!older.succeeded)
        #expect(try store.rememberedRequest(for: "kept") == kept)
        var state = try store.loadState()
        var again = state
        #expect(throws: StateStoreError.self) {
            try store.commit(try Self.changing(["kept"], on: &again, store: store.identity))
        }
        for id in 0..<12 {
            try store.commit(try Self.changing(["new-\(id)"], on: &state, store: store.identity))
        }
        #expect(store.generation.number >= 3)
        #expect(try store.rememberedRequest(for: "kept") == nil)
        #expect(try client.range(EtcdRangeRequest.prefix("/m/ids/", countOnly: true)).count == 0)
    }

    /// Four replicas remember ids at once, each a batch of 16 fresh ids on its own connection
    /// (about 2,500 ids a second, paced; the rate is printed, not asserted): every id any of them
    /// wrote in the last `minimumAge` (or among the last `minimumCount`) is still remembered at the
    /// end, and the count stays bounded.
    /// (Four replicas each trimming on their own once cut the window from 10,600 to 9,894 ids.)
    @Test func racingReplicasKeepEveryIdTheWindowPromises() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        // Generations close by age here, every 1.5 s, so the third opens (and the first is
        // deleted) within the 5 s run at any rate over 70 ids/s; none fills (that would
        // shorten the age floor, as the window allows; 4,000 filled in a second at 4,000 ids/s).
        let window = RequestIDWindow(
            minimumAge: .milliseconds(1_500), minimumCount: 100, maximumCount: 1_000_000)
        // The reader looks up thousands of ids at the end, each a read of an id log entry, and
        // in a local run of the full suite one such read took over 1 s (49 KB of its answer in):
        // a slow read is not what this test is about either.
        let reader = try open(
            cluster, prefix: "/w/", window: window, requestTimeout: .seconds(5) * testSlowdown)
        let written = Box<[(id: String, at: ContinuousClock.Instant)]>([])
        let failures = Box<[String]>([])
        let started = ContinuousClock.now
        let group = DispatchGroup()
        for replica in 0..<4 {
            // Threads of their own, not Dispatch's global queue: its workers are as many as the
            // cores, and the four replicas are to race, not take turns.
            group.enter()
            Thread {
                defer { group.leave() }
                // A replica of its own: an EtcdStore belongs to one thread.
                let store: EtcdStore
                do {
                    // A replica that lost often reads the others' events back through the
                    // gateway, and on a loaded machine such a read once took over etcd's 1 s
                    // (the suite beside it filling a disk): a slow read is not what this
                    // test is about.
                    store = try open(
                        cluster, prefix: "/w/", window: window, requestTimeout: .seconds(5) * testSlowdown)
                } catch {
                    failures.update { $0.append("replica \(replica) did not open: \(error)") }
                    return
                }
                var state: CountriesState
                do {
                    state = try store.loadState()
                } catch {
                    failures.update { $0.append("replica \(replica) did not load: \(error)") }
                    return
                }
                var batchNumber = 0
                while ContinuousClock.now - started < .seconds(5) {
                    let ids = (0..<16).map { "r\(replica)-\(batchNumber)-\($0)" }
                    batchNumber += 1
                    // Losing the compare to the other three many times in a row is expected
                    // (TSan runs saw over 50): each batch keeps trying, on the state it catches
                    // up to, until a deadline well past the run, with a short random pause so
                    // no replica starves.
                    let giveUp = started + .seconds(5) + .seconds(30) * testSlowdown
                    while true {
                        let refusal: StateStoreError?
                        var working = state
                        let batch: StoreBatch
                        do {
                            batch = try Self.changing(ids, on: &working, store: store.identity)
                        } catch {
                            failures.update { $0.append("\(ids[0]): \(error)") }
                            break
                        }
                        do throws(StateStoreError) {
                            try store.commit(batch)
                            refusal = nil
                        } catch {
                            refusal = error
                        }
                        guard let refusal else {
                            state = working
                            let now = ContinuousClock.now
                            written.update { $0 += ids.map { ($0, now) } }
                            // Paced by 8 ms after each batch a replica, about 2,500 ids/s in
                            // all, near the rate this test was written at. Commits over gRPC
                            // went over 14,000/s, and then a replica that lost often fell past
                            // the kept events, and its catch-up's reads timed out on a loaded
                            // machine: not what this test is about (that catch-up is
                            // `aReplicaBehindEveryKeptEventCatchesUpFromTheSnapshot`).
                            Thread.sleep(forTimeInterval: 0.008)
                            break
                        }
                        // Another replica wrote first: catch up, and again.
                        guard refusal.code == .moved && refusal.remembered.isEmpty,
                            ContinuousClock.now < giveUp
                        else {
                            failures.update { $0.append("\(ids[0]): \(refusal)") }
                            break
                        }
                        do {
                            state = try store.catchUp(state)
                        } catch {
                            failures.update { $0.append("\(ids[0]): catching up: \(error)") }
                            break
                        }
                        Thread.sleep(forTimeInterval: Double.random(in: 0...0.002))
                    }
                }
            }.start()
        }
        // Each replica gives up at its own deadline; this bounds the test if one never returns.
        try #require(
            group.wait(timeout: .now() + 120.0 * Double(testSlowdown)) == .success, "a replica never finished"
        )
        #expect(failures.value.isEmpty, "\(failures.value.prefix(3))")
        let all = written.value
        let elapsed = ContinuousClock.now - started
        print(
            "racingReplicas: \(all.count) ids in \(elapsed), \(Double(all.count) / elapsed.timeInterval) ids/s"
        )
        let end = ContinuousClock.now
        let promised = all.enumerated().filter { index, entry in
            end - entry.at < window.minimumAge || index >= all.count - window.minimumCount
        }
        var forgotten: [String] = []
        for (_, entry) in promised where try reader.rememberedRequest(for: entry.id) == nil {
            forgotten.append(entry.id)
        }
        #expect(forgotten.isEmpty, "\(forgotten.count) of \(promised.count) promised ids were forgotten")
        // Each entry of the id log is a batch of 16 ids.
        let kept =
            16
            * (try EtcdClient(endpoints: cluster.clientURLs).range(
                EtcdRangeRequest.prefix("/w/idlog/", countOnly: true)
            ).count)
        // Two generations at most: what the last two closings left, well under all that was
        // written.
        #expect(kept < Int64(all.count), "bounded: \(kept) of \(all.count) ids kept")
        print("racingReplicas: \(kept) of \(all.count) ids kept, in \(reader.generation.number) generations")
    }

    /// Commits `batch`, which must be refused as `moved` with the first replies of `ids`, in
    /// that order; `why` says what it means when it is committed instead.
    private static func expectRemembered(
        _ ids: [String], committing batch: StoreBatch, on store: EtcdStore, _ why: Comment,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            try store.commit(batch)
            Issue.record(why, sourceLocation: sourceLocation)
        } catch {
            #expect(
                error.code == .moved && error.remembered.map(\.id) == ids, "\(error)",
                sourceLocation: sourceLocation)
        }
    }

    /// A batch on `state` that toggles a row for each id and remembers the ids; `state` becomes
    /// the state after it.
    private static func changing(_ ids: [String], on state: inout CountriesState, store: String) throws
        -> StoreBatch
    {
        var batch = StoreBatch()
        batch.basis = state.seq
        for (offset, id) in ids.enumerated() {
            var result = try state.apply(.toggle(.index(offset % 8)), seed: SeedList.standard)
            result.event?.store = store
            let event = try #require(result.event)
            batch.events.append(event)
            batch.encodedEvents.append(event.encoded(as: [UInt8].self))
            batch.requests.append(
                RememberedRequest(
                    id: id, request: nil, reply: Array("{\"n\":\"\(id)\"}".utf8), eventSeq: event.seq))
        }
        batch.state = state
        return batch
    }

    /// A replica judges a generation's age by how long it has known it as well as by its wall
    /// clock (docs/HA.md, "Request ids"): with the clock set eleven minutes ahead, a generation
    /// it has known for a second is a second old, and a new generation starts its count again.
    @Test func aGenerationIsNoOlderThanThisReplicaHasKnownIt() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let store = try open(cluster, prefix: "/judged/")
        let before = SteadyWallClock.bootNanoseconds()
        let memory = try EtcdIDMemory(
            generation: store.generation, client: EtcdClient(endpoints: cluster.clientURLs),
            layout: EtcdLayout(prefix: "/judged/"),
            seedRows: CountriesState(countries: SeedList.standard).rows, logger: logger)
        let after = SteadyWallClock.bootNanoseconds()
        let started = memory.generation.startedMilliseconds
        let elevenMinutesAhead = RequestIDWindow.nowMilliseconds + 660_000
        let judged = memory.windowNowMilliseconds(wall: elevenMinutesAhead, boot: after + 1_000_000_000)
        // Known since between `before` and `after`: a second, plus at most the time the opening
        // took.
        #expect(judged >= started + 1_000)
        #expect(judged <= started + 1_000 + (after - before) / 1_000_000 + 1)
        // A later generation is known from when this replica learns it.
        var next = memory.generation
        next.number += 1
        next.startedMilliseconds = started + 5_000
        let learned = SteadyWallClock.bootNanoseconds()
        memory.committed([], generation: next, logSeq: nil, bytes: 0, through: try store.loadState().seq)
        let judgedNext = memory.windowNowMilliseconds(wall: elevenMinutesAhead, boot: learned + 2_000_000_000)
        #expect(judgedNext <= started + 5_000 + 2_000)
        #expect(
            judgedNext >= started + 5_000 + 2_000 - (SteadyWallClock.bootNanoseconds() - learned) / 1_000_000
                - 1)
    }
}
