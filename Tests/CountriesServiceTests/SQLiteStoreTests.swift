import CountriesCore
import Foundation
import SQLite
import SystemSupport
import Testing

@testable import CountriesService
@testable import CountriesStore

/// The SQLite store on a real file in a temporary directory.
@Suite struct SQLiteStoreTests {
    /// A fresh directory holding `countries.db`, removed at the end of the test.
    private final class Scratch {
        let directory = "/tmp/cst-store-\(UUID().uuidString.prefix(8))"
        var path: String { "\(directory)/countries.db" }

        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }

        deinit {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    private let seed = SeedList.standard

    /// Applies `changes` to `state`, returning the batch that commits them.
    private func batch(_ changes: [Change], on state: inout CountriesState) throws -> StoreBatch {
        var batch = StoreBatch()
        for change in changes {
            if let event = try state.apply(change, seed: seed).event { batch.events.append(event) }
        }
        return batch
    }

    @Test func aNewStoreHoldsTheSeedAtSeqZero() throws {
        let scratch = try Scratch()
        let store = try SQLiteStore(path: scratch.path, seed: seed)
        #expect(try store.loadState() == CountriesState(countries: seed, seq: 0))
        #expect(try store.events(after: 0, currentSeq: 0) == [])
        #expect(try store.oldestRetainedSeq(currentSeq: 0) == 1)
        #expect(store.sizeOnDisk > 0)
    }

    @Test func commitThenReopenGivesTheSameState() throws {
        let scratch = try Scratch()
        var state = CountriesState(countries: seed)
        do {
            let store = try SQLiteStore(path: scratch.path, seed: seed)
            try store.commit(
                try batch(
                    [
                        .toggle(.index(2)), .add(name: "Chad", visited: true),
                        .set(.name("Italy"), visited: true),
                    ],
                    on: &state))
            var remembered = StoreBatch()
            remembered.requests = [
                RememberedRequest(id: "r-1", request: Array("{}".utf8), reply: Array("first reply".utf8))
            ]
            try store.commit(remembered)
        }
        let reopened = try SQLiteStore(path: scratch.path, seed: [Country(name: "Ignored")])
        #expect(try reopened.loadState() == state)
        #expect(state.seq == 3)
        #expect(try reopened.rememberedReply(for: "r-1") == Array("first reply".utf8))
        #expect(try reopened.rememberedReply(for: "r-2") == nil)
        #expect(
            try reopened.events(after: 0, currentSeq: 3)?.map(\.topic) == [
                .countryChanged, .countryAdded, .countryChanged,
            ])
    }

    @Test func removeShiftsTheLaterPositionsUp() throws {
        let scratch = try Scratch()
        var state = CountriesState(countries: seed)
        let store = try SQLiteStore(path: scratch.path, seed: seed)
        // Two removes in one transaction, the second at a position the first shifted.
        try store.commit(try batch([.remove(.index(2)), .remove(.index(2)), .remove(.index(5))], on: &state))
        let loaded = try SQLiteStore(path: scratch.path, seed: seed).loadState()
        #expect(loaded == state)
        #expect(
            loaded.countries.map(\.name) == ["United States", "United Kingdom", "Spain", "Russia", "Moldova"])
    }

    @Test func resetPutsBackTheGivenRows() throws {
        let scratch = try Scratch()
        var state = CountriesState(countries: seed)
        let store = try SQLiteStore(path: scratch.path, seed: seed)
        try store.commit(
            try batch([.remove(.index(0)), .add(name: "Oman"), .toggle(.index(0)), .reset], on: &state))
        let loaded = try store.loadState()
        #expect(loaded == CountriesState(countries: seed, seq: 4))
        #expect(try SQLiteStore(path: scratch.path, seed: seed).loadState() == loaded)
    }

    @Test func eventsAreTrimmedToTheRetainedNumberAndTheHistoryBoundaryHolds() throws {
        let scratch = try Scratch()
        var state = CountriesState(countries: seed)
        let store = try SQLiteStore(path: scratch.path, seed: seed)
        let total = Limits.retainedEvents + 5
        try store.commit(try batch(Array(repeating: .toggle(.index(1)), count: total - 1), on: &state))
        try store.commit(try batch([.toggle(.index(1))], on: &state))
        let current = state.seq
        #expect(current == UInt64(total))

        let oldest = try store.oldestRetainedSeq(currentSeq: current)
        #expect(oldest == 6)
        let kept = try #require(try store.events(after: oldest - 1, currentSeq: current))
        #expect(kept.count == Limits.retainedEvents)
        #expect(kept.first?.seq == oldest)
        #expect(kept.last?.seq == current)
        #expect(
            try store.events(after: oldest - 2, currentSeq: current) == nil, "event \(oldest - 1) is gone")
        #expect(try store.events(after: current - 1, currentSeq: current)?.map(\.seq) == [current])
        #expect(try store.events(after: current, currentSeq: current) == [])
        #expect(try store.events(after: current + 1, currentSeq: current) == nil, "since ahead of the seq")
    }

    @Test func requestIDsAreTrimmedToTheRetainedNumber() throws {
        let scratch = try Scratch()
        let store = try SQLiteStore(path: scratch.path, seed: seed, retention: .countOnly)
        let total = Limits.retainedRequestIDs + 3
        var first = StoreBatch()
        first.requests = (0..<total - 1).map {
            RememberedRequest(id: "id-\($0)", reply: Array("reply \($0)".utf8))
        }
        try store.commit(first)
        var last = StoreBatch()
        last.requests = [RememberedRequest(id: "id-\(total - 1)", reply: Array("reply \(total - 1)".utf8))]
        try store.commit(last)

        for gone in 0..<3 {
            #expect(try store.rememberedReply(for: "id-\(gone)") == nil, "id-\(gone) is forgotten")
        }
        #expect(try store.rememberedReply(for: "id-3") == Array("reply 3".utf8))
        #expect(try store.rememberedReply(for: "id-\(total - 1)") == Array("reply \(total - 1)".utf8))
    }

    /// An id's age is stored with it: after a restart a young id is still kept beyond the count
    /// floor, and an id from before ages were stored (schema 3) counts as old.
    @Test func idsKeepTheirAgeAcrossARestart() throws {
        let scratch = try Scratch()
        let clock = TestClock(hoursAhead: 0)
        do {
            let store = try SQLiteStore(path: scratch.path, seed: seed, clock: clock.now)
            var burst = StoreBatch()
            burst.requests = (0..<Limits.retainedRequestIDs + 5).map {
                RememberedRequest(id: "id-\($0)", reply: Array("reply \($0)".utf8))
            }
            try store.commit(burst)
        }
        let reopened = try SQLiteStore(path: scratch.path, seed: seed, clock: clock.now)
        #expect(try reopened.rememberedReply(for: "id-0") == Array("reply 0".utf8), "young: kept")
        clock.advance(by: Limits.requestIDMinimumAge)
        #expect(try reopened.rememberedReply(for: "id-4") == nil, "old and beyond the count")
        #expect(try reopened.rememberedReply(for: "id-5") == Array("reply 5".utf8))

        let database = try Database(path: scratch.path, mode: .readWrite)
        try database.execute("UPDATE requests SET at = NULL")
        let legacy = try SQLiteStore(path: scratch.path, seed: seed, clock: TestClock(hoursAhead: 0).now)
        #expect(try legacy.rememberedReply(for: "id-4") == nil, "no age: old")
        #expect(try legacy.rememberedReply(for: "id-5") == Array("reply 5".utf8))
    }

    /// An id that comes twice in one batch keeps one row, with the later reply: in a small batch
    /// and in one past the ids compared one by one (BatchIDTable), and after a restart.
    @Test(arguments: [3, 30])
    func anIDTwiceInOneBatchKeepsOneRowWithTheLaterReply(size: Int) throws {
        let scratch = try Scratch()
        do {
            let store = try SQLiteStore(path: scratch.path, seed: seed)
            var batch = StoreBatch()
            batch.requests = (0..<size).map {
                RememberedRequest(id: "id-\($0)", reply: Array("first \($0)".utf8))
            }
            batch.requests.append(RememberedRequest(id: "id-1", reply: Array("later".utf8)))
            try store.commit(batch)
            #expect(try store.rememberedReply(for: "id-1") == Array("later".utf8))
            #expect(try store.rememberedReply(for: "id-2") == Array("first 2".utf8))
        }
        let rows = try Database(path: scratch.path).prepare("SELECT count(*) FROM requests WHERE id = 'id-1'")
            .rows()
        #expect(rows == [[.integer(1)]])
        let reopened = try SQLiteStore(path: scratch.path, seed: seed)
        #expect(try reopened.rememberedReply(for: "id-1") == Array("later".utf8))
    }

    /// A reset's reply is the list it put back, which its event holds already: it is kept as a
    /// reference to the event (20 resets of a 10,000-name list kept the list 40 times), written
    /// in full before the event is deleted, and read back byte for byte, also after a restart.
    @Test func aResetsReplyIsKeptByReferenceToItsEvent() throws {
        let scratch = try Scratch()
        let long = (0..<2_000).map { Country(name: "Country \($0)", visited: false) }
        let store = try SQLiteStore(path: scratch.path, seed: long)
        let handler = try makeHandler(on: store, seed: long)
        func handle(_ bodies: [String]) -> [Data] {
            handler.handled(bodies: bodies).replies.map { Data($0.body) }
        }
        func storedReply() throws -> (bytes: Int64, event: SQLiteValue?) {
            let row = try Database(path: scratch.path).prepare(
                "SELECT length(reply), event FROM requests WHERE id = 'the-reset'"
            ).rows().first
            guard case .integer(let bytes)? = row?.first else { throw HarnessError("no row for the reset") }
            return (bytes, row?.last)
        }
        let first = try #require(handle([#"{"op":"reset","id":"the-reset"}"#]).first)
        #expect(try Reply.decode(first).countries?.count == 2_000)
        #expect(try storedReply().bytes == 0 && storedReply().event == .integer(1), "by reference")
        #expect(try store.rememberedReply(for: "the-reset") == Array(first))

        // Past the kept events: the reset's event goes, its reply is written in full first.
        for start in stride(from: 0, to: Limits.retainedEvents + 2 * Int(SQLiteStore.rowsInterval), by: 250) {
            _ = handle((start..<start + 250).map { #"{"op":"toggle","index":\#($0 % 2_000)}"# })
        }
        #expect(try store.oldestRetainedSeq(currentSeq: handler.state.seq) > 1, "the reset's event is gone")
        #expect(try storedReply().bytes == Int64(first.count) && storedReply().event == .null, "in full")
        #expect(try store.rememberedReply(for: "the-reset") == Array(first))
        let reopened = try SQLiteStore(path: scratch.path, seed: long)
        #expect(try reopened.rememberedReply(for: "the-reset") == Array(first))
    }

    /// Events are kept within a byte budget too: counted only in events, resets of a long list
    /// (15 MB each for the longest) made the file grow by their size until 10,000 of them. A
    /// budget of 200 KB here, resets of about 30 KB: the file keeps at most half as much again
    /// as the budget, `history` has the newest events, and a reopened store has the same state.
    /// The resets' remembered replies, written in full once their events go, count against the
    /// ids' byte maximum.
    @Test func eventsAreKeptWithinTheirByteBudgetAndResetRepliesCountAgainstTheIDs() throws {
        let scratch = try Scratch()
        let long = (0..<300).map {
            Country(name: "Country \($0) " + String(repeating: "x", count: 60), visited: false)
        }
        var retention = RequestIDRetention()
        retention.maximumBytes = 400_000
        let budget = 200_000
        let store = try SQLiteStore(
            path: scratch.path, seed: long, retention: retention, retainedEventBytes: budget)
        let handler = try makeHandler(on: store, seed: long)
        func storedBytes(_ sql: String) throws -> Int {
            guard
                case .integer(let bytes)? = try Database(path: scratch.path).prepare(sql).rows().first?.first
            else { return 0 }
            return Int(bytes)
        }
        var resetBytes = 0
        var mostKept = 0
        var mostRemembered = 0
        for index in 0..<60 {
            let batch = handler.handled(bodies: [
                #"{"op":"reset","id":"reset-\#(index)"}"#, #"{"op":"toggle","index":1}"#,
            ])
            resetBytes = max(resetBytes, batch.replies.first?.body.count ?? 0)
            mostKept = max(mostKept, try storedBytes("SELECT sum(length(body)) FROM events"))
            mostRemembered = max(mostRemembered, try storedBytes("SELECT sum(length(reply)) FROM requests"))
        }
        #expect(resetBytes > 25_000)
        #expect(mostKept <= budget + budget / 2 + 2 * resetBytes, "kept \(mostKept) bytes of events")
        #expect(mostRemembered <= 400_000 + 2 * resetBytes, "kept \(mostRemembered) bytes of replies")
        let current = handler.state.seq
        #expect(current == 120)
        let oldest = try store.oldestRetainedSeq(currentSeq: current)
        #expect(oldest > 100, "the old resets went")
        let kept = try #require(try store.events(after: oldest - 1, currentSeq: current))
        #expect(kept.last?.seq == current)
        #expect(try store.events(after: 0, currentSeq: current) == nil, "history says they went")
        #expect(try store.rememberedReply(for: "reset-59") != nil, "the newest reset's id is kept")
        let reopened = try SQLiteStore(path: scratch.path, seed: long, retainedEventBytes: budget)
        #expect(try reopened.loadState() == handler.state)
    }

    /// Handles one request on a handler over `store`; its reply.
    private func reply(_ json: String, on store: SQLiteStore) throws -> Reply {
        guard let reply = try makeHandler(on: store, seed: seed).replies(to: [json]).first else {
            throw HarnessError("no reply to \(json)")
        }
        return reply
    }

    private func schema(of path: String) throws -> SQLiteValue? {
        try Database(path: path).prepare("SELECT value FROM meta WHERE key = 'schema'").rows().first?.first
    }

    /// A store written by schema 1 (before requests were remembered with what they asked) is
    /// brought to schema 2 in place; its remembered ids answer as they did.
    @Test func aSchemaOneStoreIsMigratedInPlaceAndKeepsItsRememberedReplies() throws {
        let scratch = try Scratch()
        let oldReply = Data(#"{"country":{"index":2,"name":"France","visited":true},"ok":true,"seq":1}"#.utf8)
        do {
            let old = try Database(path: scratch.path)
            try old.execute(
                """
                PRAGMA journal_mode=WAL;
                CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE countries(position INTEGER PRIMARY KEY, name TEXT NOT NULL, visited INTEGER NOT NULL);
                CREATE TABLE events(seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, body BLOB NOT NULL);
                CREATE TABLE requests(
                    ordinal INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, reply BLOB NOT NULL);
                INSERT INTO meta(key, value) VALUES ('schema', 1), ('seq', 1);
                INSERT INTO countries VALUES (0, 'United States', 1), (1, 'United Kingdom', 0), (2, 'France', 1);
                """)
            let event = Event(seq: 1, kind: .changed(IndexedCountry(index: 2, name: "France", visited: true)))
            try old.prepare("INSERT INTO events VALUES (1, 'country.changed', ?1)").run([
                .blob([UInt8](event.encoded()))
            ])
            try old.prepare("INSERT INTO requests(id, reply) VALUES ('old-1', ?1)").run([
                .blob([UInt8](oldReply))
            ])
        }
        #expect(try schema(of: scratch.path) == .integer(1))

        let store = try SQLiteStore(path: scratch.path, seed: seed)
        #expect(try schema(of: scratch.path) == .integer(SQLiteSchema.schemaVersion))
        #expect(try store.loadState().seq == 1)
        #expect(try store.events(after: 0, currentSeq: 1)?.count == 1)
        // Remembered before the migration, without what was asked: any request under the id
        // gets the first reply, as schema 1 did.
        #expect(
            try reply(#"{"op":"toggle","name":"France","id":"old-1"}"#, on: store) == Reply.decode(oldReply))
        #expect(try reply(#"{"op":"remove","index":0,"id":"old-1"}"#, on: store) == Reply.decode(oldReply))
        // Remembered after it: another request under the id is a conflict, also after reopening.
        #expect(try reply(#"{"op":"toggle","name":"United Kingdom","id":"new-1"}"#, on: store).seq == 2)
        let reopened = try SQLiteStore(path: scratch.path, seed: seed)
        #expect(try reply(#"{"op":"remove","index":0,"id":"new-1"}"#, on: reopened).error?.code == "conflict")
        #expect(try reply(#"{"op":"toggle","name":"United Kingdom","id":"new-1"}"#, on: reopened).seq == 2)
        #expect(try reopened.loadState().count == 3)
    }

    /// A store written by schema 2 (request ids in a UNIQUE index, ordinals by AUTOINCREMENT,
    /// the rows and the seq written at every commit) is brought to schema 3 in place: its
    /// remembered ids, events and state are kept, and its commits are lean from then on.
    @Test func aSchemaTwoStoreIsMigratedInPlaceAndKeepsEverything() throws {
        let scratch = try Scratch()
        let firstReply = Data(
            #"{"country":{"index":1,"name":"United Kingdom","visited":true},"ok":true,"seq":1}"#.utf8)
        do {
            let old = try Database(path: scratch.path)
            try old.execute(
                """
                PRAGMA journal_mode=WAL;
                CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE countries(position INTEGER PRIMARY KEY, name TEXT NOT NULL, visited INTEGER NOT NULL);
                CREATE TABLE events(seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, body BLOB NOT NULL);
                CREATE TABLE requests(
                    ordinal INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, reply BLOB NOT NULL,
                    request BLOB);
                CREATE TABLE identity(store TEXT NOT NULL, inode INTEGER NOT NULL);
                INSERT INTO meta(key, value) VALUES ('schema', 2), ('seq', 1);
                INSERT INTO countries VALUES (0, 'United States', 1), (1, 'United Kingdom', 1), (2, 'France', 0);
                """)
            let event = Event(
                seq: 1, kind: .changed(IndexedCountry(index: 1, name: "United Kingdom", visited: true)))
            try old.prepare("INSERT INTO events VALUES (1, 'country.changed', ?1)").run([
                .blob([UInt8](event.encoded()))
            ])
            let asked = Change.toggle(.index(1)).canonicalForm
            try old.prepare("INSERT INTO requests(id, reply, request) VALUES ('two-1', ?1, ?2)").run([
                .blob([UInt8](firstReply)), .blob([UInt8](asked)),
            ])
        }
        #expect(try schema(of: scratch.path) == .integer(2))

        let store = try SQLiteStore(path: scratch.path, seed: seed)
        #expect(try schema(of: scratch.path) == .integer(SQLiteSchema.schemaVersion))
        let tables = try Database(path: scratch.path).prepare(
            "SELECT sql FROM sqlite_master WHERE name = 'requests'"
        ).rows()
        guard case .text(let sql)? = tables.first?.first else { throw HarnessError("no requests table") }
        #expect(!sql.contains("AUTOINCREMENT") && !sql.contains("UNIQUE"), "\(sql)")
        #expect(try store.loadState().seq == 1)
        #expect(try store.events(after: 0, currentSeq: 1)?.count == 1)
        #expect(try reply(#"{"op":"toggle","index":1,"id":"two-1"}"#, on: store) == Reply.decode(firstReply))
        #expect(try reply(#"{"op":"remove","index":0,"id":"two-1"}"#, on: store).error?.code == "conflict")
        #expect(try reply(#"{"op":"toggle","name":"France","id":"three-1"}"#, on: store).seq == 2)
        let reopened = try SQLiteStore(path: scratch.path, seed: seed)
        #expect(
            try reply(#"{"op":"toggle","index":1,"id":"two-1"}"#, on: reopened) == Reply.decode(firstReply))
        #expect(try reply(#"{"op":"toggle","name":"France","id":"three-1"}"#, on: reopened).seq == 2)
        let state = try reopened.loadState()
        #expect(state.seq == 2)
        #expect(state.countries.map(\.visited) == [true, true, true])
    }

    /// A toggle with its request id is one small commit: the WAL grows by at most two pages
    /// (the event's and the request's), not one page per table and index it touches. Measured
    /// by the WAL's size, which only grows until the first checkpoint.
    @Test func aToggleCommitAppendsAtMostTwoPagesToTheLog() throws {
        let scratch = try Scratch()
        var state = CountriesState(countries: seed)
        let store = try SQLiteStore(path: scratch.path, seed: seed)
        func toggle(_ index: Int) throws {
            var next = try batch([.toggle(.index(index % 8))], on: &state)
            next.requests = [
                RememberedRequest(id: "t-\(state.seq)", request: Array("{}".utf8), reply: Array("r".utf8))
            ]
            try store.commit(next)
        }
        try toggle(0)
        let walPath = scratch.path + "-wal"
        func walBytes() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: walPath))?[.size] as? Int) ?? 0
        }
        let before = walBytes()
        let commits = 40
        for index in 1...commits { try toggle(index) }
        let pageSize = 4096
        let frameBytes = pageSize + 24
        let framesPerCommit = Double(walBytes() - before) / Double(frameBytes) / Double(commits)
        #expect(framesPerCommit <= 2.2, "\(framesPerCommit) WAL frames per toggle commit")
    }

    /// Past the most ids kept, an id is forgotten at once but its row waits for the next trim of
    /// ``SQLiteStore/rowsInterval`` ids, as an old id's does: a commit still appends at most two
    /// pages. Deleting the oldest row at every commit wrote a third page per commit, and
    /// a bench run's service passes 100,000 ids within seconds.
    @Test func pastTheMostIDsKeptACommitStillAppendsAtMostTwoPages() throws {
        let scratch = try Scratch()
        var retention = RequestIDRetention()
        retention.minimumCount = 10
        retention.maximumCount = 40
        let store = try SQLiteStore(
            path: scratch.path, seed: seed, retention: retention, clock: TestClock(hoursAhead: 0).now)
        var state = CountriesState(countries: seed)
        // Replies of 200 bytes: the 40 rows kept span pages, so the oldest is not on the page
        // the newest goes to.
        let reply = [UInt8](repeating: UInt8(ascii: "r"), count: 200)
        func toggle() throws {
            var next = try batch([.toggle(.index(Int(state.seq % 8)))], on: &state)
            next.requests = [
                RememberedRequest(id: "t-\(state.seq)", request: Array("{}".utf8), reply: reply)
            ]
            try store.commit(next)
        }
        func rows() throws -> SQLiteValue? {
            try Database(path: scratch.path).prepare("SELECT count(*) FROM requests").rows().first?.first
        }
        for _ in 0..<50 { try toggle() }
        #expect(try store.rememberedReply(for: "t-10") == nil, "beyond the newest 40: forgotten")
        #expect(try store.rememberedReply(for: "t-11") == reply)
        #expect(try rows() == .integer(50), "the rows wait for the next trim")
        let walPath = scratch.path + "-wal"
        func walBytes() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: walPath))?[.size] as? Int) ?? 0
        }
        let before = walBytes()
        let commits = 40
        for _ in 0..<commits { try toggle() }
        let framesPerCommit = Double(walBytes() - before) / Double(4096 + 24) / Double(commits)
        #expect(framesPerCommit <= 2.2, "\(framesPerCommit) WAL frames per toggle commit")
        // 296 ids: 256 may go, and go in one trim.
        for _ in 90..<296 { try toggle() }
        #expect(try rows() == .integer(40))
        let reopened = try SQLiteStore(path: scratch.path, seed: seed, retention: retention)
        #expect(try reopened.rememberedReply(for: "t-256") == nil)
        #expect(try reopened.rememberedReply(for: "t-257") == reply)
    }

    /// The rows are written from the events every so often, not at each commit; a store
    /// reopened at any point between gets the same state by replaying the events after them.
    @Test func reopeningBetweenCheckpointsReplaysTheEventsAfterThem() throws {
        let scratch = try Scratch()
        var state = CountriesState(countries: seed)
        let store = try SQLiteStore(path: scratch.path, seed: seed)
        for round in 0..<700 {
            let change: Change =
                switch round % 50 {
                case 7: .add(name: "Land \(round)")
                case 19: .remove(.index(3))
                case 31: .reset
                default: .toggle(.index(round % 6))
                }
            try store.commit(try batch([change], on: &state))
            if [1, 255, 256, 257, 300, 511, 512, 699].contains(round) {
                #expect(
                    try SQLiteStore(path: scratch.path, seed: seed).loadState() == state, "after \(round + 1)"
                )
            }
        }
    }

    @Test func aStoreFromANewerSchemaIsRefused() throws {
        let scratch = try Scratch()
        _ = try SQLiteStore(path: scratch.path, seed: seed)
        try Database(path: scratch.path).execute("UPDATE meta SET value = 99 WHERE key = 'schema'")
        #expect {
            _ = try SQLiteStore(path: scratch.path, seed: seed)
        } throws: { error in
            guard let error = error as? StoreOpenError else { return false }
            return error.code == .unsupported && error.message.contains("schema 99")
        }
    }

    @Test func aFileOfGarbageIsReportedAsCorrupt() throws {
        let scratch = try Scratch()
        var garbage = Data("this is not a database, it is a shopping list. ".utf8)
        while garbage.count < 8_192 { garbage.append(garbage) }
        try garbage.write(to: URL(fileURLWithPath: scratch.path))

        #expect {
            _ = try SQLiteStore(path: scratch.path, seed: seed)
        } throws: { error in
            guard let error = error as? StoreOpenError else { return false }
            return error.code == .corrupt && error.path == scratch.path
                && error.message.contains("not a countries store")
                && error.message.contains("--db")
                && error.description.contains(scratch.path)
        }
    }

    @Test func anotherSQLiteDatabaseIsRefusedAndLeftAlone() throws {
        let scratch = try Scratch()
        do {
            let other = try Database(path: scratch.path)
            try other.execute("CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES ('keep me');")
        }
        #expect {
            _ = try SQLiteStore(path: scratch.path, seed: seed)
        } throws: { error in
            guard let error = error as? StoreOpenError else { return false }
            return error.code == .corrupt && error.message.contains("not a countries store")
                && error.message.contains("notes") && error.message.contains("--db")
        }
        let other = try Database(path: scratch.path)
        #expect(try other.pragma("journal_mode") == .text("delete"), "not even the journal mode changed")
        #expect(
            try other.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").rows() == [
                [.text("notes")]
            ])
    }

    @Test func aMissingDirectoryIsNamed() throws {
        let missing = "/tmp/cst-missing-\(UUID().uuidString.prefix(8))/deeper"
        #expect {
            _ = try SQLiteStore(path: "\(missing)/countries.db", seed: seed)
        } throws: { error in
            guard let error = error as? StoreOpenError else { return false }
            return error.code == .cannotOpen
                && error.message.contains("the directory \(missing) does not exist")
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
