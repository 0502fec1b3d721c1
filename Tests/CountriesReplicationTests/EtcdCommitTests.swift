import CountriesCore
import Etcd
import Foundation
import Testing

@testable import CountriesReplication
@testable import CountriesStore

/// The shape of a commit's etcd transaction, without etcd (``EtcdCommit``): what it compares,
/// writes and reads back, and what a refusal's reads say. The suites against a real etcd
/// (`EtcdStoreTests`, `EtcdRetentionTests`) show what etcd does with it.
@Suite struct EtcdCommitTests {
    private let layout = EtcdLayout(prefix: "/t/")
    private let identity = "s-0123456789abcdefghijklmno"
    private let seedRows = SeedList.standard.enumerated().map { IndexedCountry($0.element, at: $0.offset) }
    private let started: Int64 = 1_000_000

    private func batch(
        basis: UInt64, events: [Event], requests: [RememberedRequest] = [], checked: [String] = []
    )
        -> StoreBatch
    {
        var batch = StoreBatch()
        batch.basis = basis
        batch.events = events
        batch.encodedEvents = events.map { $0.encoded(as: [UInt8].self) }
        batch.requests = requests
        batch.checkedIDs = checked
        return batch
    }

    private func toggle(_ seq: UInt64) -> Event {
        var event = Event(
            seq: seq, kind: .changed(IndexedCountry(index: 0, name: "Afghanistan", visited: true)))
        event.store = identity
        return event
    }

    private func knowing(
        generation number: UInt64 = 3, count: Int = 5, firstSeq: UInt64 = 0, previousFirstSeq: UInt64 = 0,
        window: RequestIDWindow = RequestIDWindow(), snapshot: UInt64 = 0, trimmedBefore: UInt64? = nil
    ) -> EtcdCommit.Knowledge {
        EtcdCommit.Knowledge(
            generation: RequestIDWindow.Generation(
                number: number, startedMilliseconds: started, count: count, firstSeq: firstSeq,
                previousFirstSeq: previousFirstSeq),
            window: window, knownSnapshotSeq: snapshot, trimmedBefore: trimmedBefore,
            nowMilliseconds: started + 1_000)
    }

    private func commit(_ batch: StoreBatch, _ known: EtcdCommit.Knowledge) -> EtcdCommit {
        EtcdCommit(batch, layout: layout, identity: identity, seedRows: seedRows, knowing: known)
    }

    /// Each operation as text, so a transaction compares as a list of lines.
    private func lines(_ compares: [EtcdCompare]) -> [String] {
        compares.map { compare in
            switch compare {
            case .value(let key, let value): "\(key) == \(String(decoding: value, as: UTF8.self))"
            case .createRevision(let key, let revision): "\(key) created at \(revision)"
            case .modRevision(let key, let revision): "\(key) modified at \(revision)"
            case .version(let key, let version): "\(key) version \(version)"
            case .modRevisionLess(let key, let revision): "\(key) modified before \(revision)"
            case .modRevisionGreater(let key, let revision): "\(key) modified after \(revision)"
            }
        }
    }

    private func lines(_ operations: [EtcdOperation]) -> [String] {
        operations.map { operation in
            switch operation {
            case .range(let range): "range \(range.key)..<\(range.rangeEnd ?? "")"
            case .put(let key, let value): "put \(key) = \(String(decoding: value, as: UTF8.self))"
            case .putLeased(let key, _, let lease): "put \(key) leased \(lease)"
            case .deleteRange(let key, let end): "delete \(key)..<\(end ?? "")"
            }
        }
    }

    @Test func aChangeWithoutAnIDComparesTheSeqAndTheStoreAndWritesTheSeqAndTheEvent() {
        let event = toggle(8)
        let commit = commit(batch(basis: 7, events: [event]), knowing())
        #expect(lines(commit.compare) == ["/t/seq == 7", "/t/store == \(identity)"])
        #expect(
            lines(commit.success) == [
                "put /t/seq = 8",
                "put /t/events/00000000000000000008 = \(String(decoding: event.encoded(), as: UTF8.self))",
            ])
        #expect(
            lines(commit.failure) == [
                "range /t/store..<",
                "range /t/events/00000000000000000008..<\(EtcdRangeRequest.prefixEnd("/t/events/"))",
                "range /t/ids-generation..<",
                "range /t/idlog/00000000000000000008..<\(EtcdRangeRequest.prefixEnd("/t/idlog/"))",
            ])
        #expect(commit.lastSeq == 8)
        #expect(commit.written.number == 3)
        #expect(commit.trimmedTo == nil)
    }

    /// No id is compared in etcd, nor the generation (the store checked them against its
    /// memory, which the seq compare fences); the changes' ids go into one entry of the id log
    /// under the batch's first seq, in the current generation, whose key is left as it is.
    @Test func changesIDsGoIntoOneIDLogEntryAndNoIDIsCompared() {
        let toggled = RememberedRequest(
            id: "a", request: Array(#"{"index":0,"op":"toggle"}"#.utf8), reply: Array("R".utf8), eventSeq: 8)
        let added = RememberedRequest(id: "c d", request: nil, reply: Array("S".utf8), eventSeq: 9)
        let commit = commit(
            batch(basis: 7, events: [toggle(8), toggle(9)], requests: [toggled, added], checked: ["b"]),
            knowing(firstSeq: 2, previousFirstSeq: 1))
        #expect(lines(commit.compare) == ["/t/seq == 7", "/t/store == \(identity)"])
        let entry = "3\na\n{\"index\":0,\"op\":\"toggle\"}\nR\nc d\n\nS\n"
        #expect(
            lines(commit.success).prefix(2) == [
                "put /t/idlog/00000000000000000008 = \(entry)",
                "put /t/seq = 9",
            ])
        #expect(!lines(commit.success).contains { $0.contains("/t/ids/") || $0.contains("ids-generation") })
        #expect(commit.checked == ["a", "c d", "b"])
        #expect(commit.idLogBytes == entry.utf8.count)
        #expect(
            commit.written
                == RequestIDWindow.Generation(
                    number: 3, startedMilliseconds: started, count: 5, firstSeq: 2, previousFirstSeq: 1))
        // Only checked ids: nothing written, and no generation compared.
        let checkedOnly = self.commit(batch(basis: 7, events: [toggle(8)], checked: ["b"]), knowing())
        #expect(lines(checkedOnly.compare) == ["/t/seq == 7", "/t/store == \(identity)"])
        #expect(!lines(checkedOnly.success).contains { $0.contains("ids") })
    }

    /// A commit that closes the current generation opens the next at its first seq and deletes
    /// the one before the current: its entries in the id log, and its keys in a store from
    /// before the log. Ids live two generations. The ids a store kept before generations (0)
    /// have no generation before them.
    @Test func openingAGenerationDeletesTheOneBeforeTheCurrent() {
        let closing = RequestIDWindow(minimumAge: .zero, minimumCount: 1)
        let remembered = RememberedRequest(id: "a", reply: Array("R".utf8), eventSeq: 8)
        let opened = commit(
            batch(basis: 7, events: [toggle(8)], requests: [remembered]),
            knowing(firstSeq: 5, previousFirstSeq: 2, window: closing))
        #expect(
            opened.written
                == RequestIDWindow.Generation(
                    number: 4, startedMilliseconds: started + 1_000, firstSeq: 8, previousFirstSeq: 5))
        let success = lines(opened.success)
        // Its key counts no id: its entries in the log count them, this commit's first.
        #expect(success.first == "put /t/ids-generation = 4 \(started + 1_000) 0 0 8 5")
        #expect(success.contains("delete \(layout.idLog(2))..<\(layout.idLog(5))"))
        #expect(success.contains("delete /t/ids/2/..<\(EtcdRangeRequest.prefixEnd("/t/ids/2/"))"))
        #expect(success.contains("put /t/idlog/00000000000000000008 = 4\na\n\nR\n"))
        #expect(!success.contains { $0.hasPrefix("delete /t/ids/3/") })

        let legacy = commit(
            batch(basis: 7, events: [toggle(8)], requests: [remembered]),
            knowing(generation: 0, window: closing))
        #expect(legacy.written.number == 1)
        #expect(!lines(legacy.success).contains { $0.hasPrefix("delete") })
    }

    /// How full a generation is, is its key's count and what its entries in the id log hold:
    /// the window closes it on both, by ids and by bytes.
    @Test func aGenerationIsFullByItsKeyAndItsEntriesInTheLog() {
        let small = RequestIDWindow(
            minimumAge: .seconds(600), minimumCount: 1, maximumCount: 10, maximumBytes: 1_000)
        let remembered = RememberedRequest(id: "a", reply: Array("R".utf8), eventSeq: 8)
        let onOneBatch = batch(basis: 7, events: [toggle(8)], requests: [remembered])
        var known = knowing(count: 4, window: small)
        known.logged = RememberedIDs.Tally(count: 5, bytes: 100)
        #expect(commit(onOneBatch, known).written.number == 3)
        known.logged.count = 6
        #expect(commit(onOneBatch, known).written.number == 4)
        known.logged = RememberedIDs.Tally(count: 5, bytes: 995)
        #expect(commit(onOneBatch, known).written.number == 4)
    }

    /// The last 10,000 events are kept, and none after the newest snapshot known; a trim starts
    /// where the last one ended (from the prefix's start only the first time). It deletes whole
    /// entries, and ends an entry's width before the first event to keep, so the entry that may
    /// hold that event stays.
    @Test func trimsFromTheLastTrimsEndAndNeverPastTheKnownSnapshot() {
        let first = commit(batch(basis: 10_049, events: [toggle(10_050)]), knowing(snapshot: 10_000))
        // The first event to keep is 51; the entry keyed 20 may hold up to 51.
        #expect(first.trimmedTo == 51 - UInt64(EtcdLayout.eventsPerEntry - 1))
        #expect(lines(first.success).last == "delete /t/events/..<\(layout.event(20))")

        let next = commit(
            batch(basis: 10_050, events: [toggle(10_051)]), knowing(snapshot: 10_000, trimmedBefore: 20))
        #expect(next.trimmedTo == 21)
        #expect(lines(next.success).last == "delete \(layout.event(20))..<\(layout.event(21))")

        // Bounded by the snapshot: the entry that may hold the event after it stays.
        let bySnapshot = commit(
            batch(basis: 30_000, events: [toggle(30_001)]), knowing(snapshot: 10_500, trimmedBefore: 10_000))
        #expect(bySnapshot.trimmedTo == 10_470)

        // The newest snapshot known is old: nothing after it goes, so nothing new to trim.
        let held = commit(
            batch(basis: 10_050, events: [toggle(10_051)]), knowing(snapshot: 20, trimmedBefore: 21))
        #expect(held.trimmedTo == nil)
        #expect(!lines(held.success).contains { $0.hasPrefix("delete") })

        let young = commit(batch(basis: 9_999, events: [toggle(10_000)]), knowing(snapshot: 10_000))
        #expect(young.trimmedTo == nil)
        // A batch of only checked ids moves no seq and trims nothing.
        let checkedOnly = commit(batch(basis: 10_050, events: [], checked: ["x"]), knowing(snapshot: 10_050))
        #expect(checkedOnly.trimmedTo == nil)
        #expect(!lines(checkedOnly.success).contains { $0.hasPrefix("put /t/seq") })
    }

    /// A batch's events go into one entry of the log, under its first seq, one a line as
    /// published, a reset as its marker; every reader takes it back as those events.
    @Test func aBatchIsOneEntryOfTheLog() throws {
        var reset = Event(seq: 9, kind: .reset(seedRows))
        reset.store = "0123456789abcdef0123456789abcdef"  // a marker names a well-formed store
        let events = [toggle(8), reset, toggle(10)]
        let commit = commit(batch(basis: 7, events: events), knowing())
        let marker = try #require(EtcdResetMarker(for: reset, seedRows: seedRows))
        let value = [events[0].encoded(), marker.encoded, events[2].encoded()]
            .map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
        #expect(
            lines(commit.success) == ["put /t/seq = 10", "put /t/events/00000000000000000008 = \(value)"])
        guard case .put(let key, let stored)? = commit.success.last else {
            Issue.record("no put of the entry")
            return
        }
        let kv = EtcdKeyValue(key: key, value: stored, createRevision: 1, modRevision: 1, version: 1)
        #expect(layout.events(in: kv, seedRows: seedRows) == events)
    }

    /// A reset is written as its marker, and its id's reply as a reference to it when the
    /// marker makes that reply again byte for byte.
    @Test func aResetIsKeptAsItsMarker() throws {
        var reset = Event(seq: 8, kind: .reset(seedRows))
        reset.store = identity
        let marker = try #require(EtcdResetMarker(for: reset, seedRows: seedRows))
        let reply = Array(marker.reply(seedRows: seedRows))
        let remembered = RememberedRequest(
            id: "r", request: Array(#"{"op":"reset"}"#.utf8), reply: reply, eventSeq: 8)
        let commit = commit(batch(basis: 7, events: [reset], requests: [remembered]), knowing())
        let success = lines(commit.success)
        #expect(
            success.contains("put \(layout.event(8)) = \(String(decoding: marker.encoded, as: UTF8.self))"))
        #expect(
            success.contains(
                "put \(layout.idLog(8)) = 3\nr\n{\"op\":\"reset\"}\n\(String(decoding: marker.encoded, as: UTF8.self))\n"
            ))
    }

    private func range(_ kvs: [(String, String)], more: Bool = false) -> EtcdOperationResult {
        .range(
            EtcdRangeResponse(
                kvs: kvs.map {
                    EtcdKeyValue(
                        key: $0.0, value: Data($0.1.utf8), createRevision: 1, modRevision: 1, version: 1)
                }, count: Int64(kvs.count), more: more, revision: 9))
    }

    /// A refusal reads back the store, the events past the basis (all of them or none), the
    /// generation etcd holds now and the id log's entries past the basis (all or none); another
    /// store or none under the prefix, or no generation, is an error.
    @Test func aRefusalSaysWhatMovedTheStore() throws {
        let commit = commit(batch(basis: 7, events: [toggle(8)], checked: ["b"]), knowing())
        let moved = [toggle(8), toggle(9)]
        let events = moved.map { (layout.event($0.seq), String(decoding: $0.encoded(), as: UTF8.self)) }
        let generation = ("/t/ids-generation", "4 \(started) 1 2 8 3")
        let entry = (layout.idLog(8), "4\nb\n\nR\n")
        /// The refusal's reads: the store, the events, the generation, the id log.
        func refusal(
            _ events: EtcdOperationResult, _ idLog: EtcdOperationResult, store: String? = nil
        ) throws -> EtcdCommit.Refusal {
            try commit.refusal(
                EtcdTxnResponse(
                    succeeded: false, revision: 9,
                    results: [range([("/t/store", store ?? identity)]), events, range([generation]), idLog]))
        }
        let refused = try refusal(range(events), range([entry]))
        #expect(refused.newer == moved)
        // Two commits' entries, the first of two events (an event a key, as a store from
        // before entries kept them, reads the same: above).
        let batched = [toggle(8), toggle(9), toggle(10)]
        let entries = [
            (
                layout.event(8),
                [batched[0], batched[1]].map { String(decoding: $0.encoded(), as: UTF8.self) }
                    .joined(separator: "\n")
            ),
            (layout.event(10), String(decoding: batched[2].encoded(), as: UTF8.self)),
        ]
        let refusedByBatches = try refusal(range(entries), range([entry]))
        #expect(refusedByBatches.newer == batched)
        #expect(refused.generation.number == 4 && refused.generation.firstSeq == 8)
        #expect(
            refused.idLog == [
                EtcdCommit.IDLogEntry(
                    firstSeq: 8, generation: 4,
                    requests: [RememberedRequest(id: "b", reply: Array("R".utf8))],
                    bytes: entry.1.utf8.count)
            ])

        // A page cut short, or an entry that is not what its key says: the replica reads them
        // itself.
        let cut = try refusal(range(events, more: true), range([entry], more: true))
        #expect(cut.newer.isEmpty && cut.idLog == nil)
        let damaged = try refusal(
            range(events + [(layout.event(10), "{}")]), range([entry, (layout.idLog(9), "4\nb\n")]))
        #expect(damaged.newer.isEmpty && damaged.idLog == nil)

        #expect(throws: StateStoreError.self) {
            try refusal(range(events), range([entry]), store: "s-another")
        }
        #expect(throws: StateStoreError.self) {
            try commit.refusal(
                EtcdTxnResponse(
                    succeeded: false, revision: 9, results: [range([]), range([]), range([generation])]))
        }
        #expect(throws: StateStoreError.self) {
            try commit.refusal(
                EtcdTxnResponse(
                    succeeded: false, revision: 9,
                    results: [
                        range([("/t/store", identity)]), range([]), range([("/t/ids-generation", "x")]),
                    ]))
        }
    }

    /// An id log entry round-trips, a reset's reply kept as its marker; a value that is not one
    /// (a line short, an id that is not printable ASCII, no generation) is refused.
    @Test func anIDLogEntryRoundTrips() throws {
        var reset = Event(seq: 8, kind: .reset(seedRows))
        reset.store = "0123456789abcdef0123456789abcdef"  // a marker names a well-formed store
        let marker = try #require(EtcdResetMarker(for: reset, seedRows: seedRows))
        let requests = [
            RememberedRequest(
                id: "a b", request: Array(#"{"op":"reset"}"#.utf8),
                reply: Array(marker.reply(seedRows: seedRows))),
            RememberedRequest(id: "c", request: nil, reply: Array(#"{"ok":true}"#.utf8)),
        ]
        let value = EtcdLayout.encodeIDLogEntry(generation: 7, [(requests[0], marker), (requests[1], nil)])
        let decoded = try #require(EtcdLayout.decodeIDLogEntry(value, seedRows: seedRows))
        #expect(decoded.generation == 7)
        #expect(decoded.requests == requests)
        #expect(value.count < 300, "the reset's reply is kept as its marker: \(value.count) bytes")
        for bad in ["", "7", "7\n", "7\na\n\n", "x\na\n\nR\n", "7\na\u{1}\n\nR\n", "7\na\n\nR"] {
            #expect(EtcdLayout.decodeIDLogEntry(Data(bad.utf8), seedRows: seedRows) == nil, "\(bad)")
        }
    }
}
