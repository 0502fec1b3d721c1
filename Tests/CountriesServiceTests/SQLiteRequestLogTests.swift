import CountriesCore
import Foundation
import SQLite
import Testing

@testable import CountriesService
@testable import CountriesStore

/// The SQLite store's remembered requests, on an in-memory database with the store's schema:
/// the three steps of a commit, and what a damaged table does.
@Suite struct SQLiteRequestLogTests {
    private struct RolledBack: Error {}

    /// A database with the store's tables, and a log over it.
    private func makeLog(
        _ database: Database, retention: RequestIDRetention = RequestIDRetention(), trimInterval: Int = 256
    ) throws -> SQLiteRequestLog {
        try SQLiteSchema.create(database, seed: SeedList.standard)
        return try SQLiteRequestLog(
            database: database, identity: "store-a", retention: retention, trimInterval: trimInterval,
            clock: { 1_000 })
    }

    private func request(_ id: String, _ reply: String) -> RememberedRequest {
        RememberedRequest(id: id, request: Array(#"{"op":"toggle"}"#.utf8), reply: Array(reply.utf8))
    }

    /// Commits `requests` (and `events`) through the log's three steps in one transaction.
    private func commit(
        _ requests: [RememberedRequest], events: [Event] = [], on log: SQLiteRequestLog, in database: Database
    ) throws {
        var batch = StoreBatch()
        batch.requests = requests
        batch.events = events
        var commit = log.beginCommit(adding: requests)
        try database.transaction {
            for event in events {
                try database.prepare("INSERT INTO events(seq, topic, body) VALUES (?1, ?2, ?3)").run([
                    .integer(Int64(event.seq)), .text(event.topic.rawValue), .blob([UInt8](event.encoded())),
                ])
            }
            try log.write(batch, into: &commit)
        }
        log.endCommit(commit, of: requests)
    }

    @Test func aCommittedIDIsFoundWithItsRequestAndReplyAndAfterALoad() throws {
        let database = try Database(path: ":memory:")
        let log = try makeLog(database)
        try commit([request("a", "first"), request("b", "second")], on: log, in: database)
        #expect(try log.rememberedRequest(for: "a") == request("a", "first"))
        #expect(try log.rememberedRequest(for: "b")?.reply == Array("second".utf8))
        #expect(try log.rememberedRequest(for: "c") == nil)

        let loaded = try SQLiteRequestLog(
            database: database, identity: "store-a", retention: RequestIDRetention(), trimInterval: 256,
            clock: { 1_000 })
        try loaded.load(path: ":memory:")
        #expect(try loaded.rememberedRequest(for: "a") == request("a", "first"))
        // The ordinals went on from the loaded ones: no row collides.
        try commit([request("c", "third")], on: loaded, in: database)
        #expect(try loaded.rememberedRequest(for: "c")?.reply == Array("third".utf8))
        #expect(try database.prepare("SELECT count(*) FROM requests").rows().first?.first == .integer(3))
    }

    /// A transaction that fails after the log wrote into it leaves the table and the log's
    /// memory as they were: the earlier reply still answers, and the next commit's ordinals are
    /// free.
    @Test func aCommitRolledBackChangesNothing() throws {
        let database = try Database(path: ":memory:")
        let log = try makeLog(database)
        try commit([request("a", "first")], on: log, in: database)

        let failing = [request("a", "replaced"), request("b", "new")]
        var batch = StoreBatch()
        batch.requests = failing
        var rolledBack = log.beginCommit(adding: failing)
        #expect(throws: RolledBack.self) {
            try database.transaction {
                try log.write(batch, into: &rolledBack)
                throw RolledBack()
            }
        }
        #expect(try log.rememberedRequest(for: "a")?.reply == Array("first".utf8))
        #expect(try log.rememberedRequest(for: "b") == nil)

        try commit(failing, on: log, in: database)
        #expect(try log.rememberedRequest(for: "a")?.reply == Array("replaced".utf8))
        #expect(try log.rememberedRequest(for: "b")?.reply == Array("new".utf8))
        #expect(try database.prepare("SELECT count(*) FROM requests").rows().first?.first == .integer(2))
    }

    /// A reset's reply is kept as a reference to its event; with that event gone from the
    /// table, the look-up says which event is missing instead of answering something else.
    @Test func aResetWhoseEventIsMissingIsReportedNotAnswered() throws {
        let database = try Database(path: ":memory:")
        let log = try makeLog(database)
        var state = CountriesState(countries: SeedList.standard)
        let event = try #require(try state.apply(.reset, seed: SeedList.standard).event)
        var reply = Reply(answering: event)
        reply.store = "store-a"
        let reset = RememberedRequest(
            id: "the-reset", request: Array(#"{"op":"reset"}"#.utf8), reply: reply.encoded(as: [UInt8].self),
            eventSeq: event.seq)
        try commit([reset], events: [event], on: log, in: database)
        let row = try database.prepare("SELECT length(reply), event FROM requests WHERE id = 'the-reset'")
            .rows()
        #expect(row.first == [.integer(0), .integer(Int64(event.seq))], "kept by reference")
        let found = try #require(try log.rememberedRequest(for: "the-reset"))
        #expect(found.request == reset.request && found.reply == reset.reply, "made again from the event")

        try database.execute("DELETE FROM events")
        #expect {
            try log.rememberedRequest(for: "the-reset")
        } throws: { error in
            "\(error)".contains("event \(event.seq)") && "\(error)".contains("missing or damaged")
        }
    }

    @Test func aDamagedRowIsReportedAsCorruptOnLoad() throws {
        let database = try Database(path: ":memory:")
        _ = try makeLog(database)
        try database.execute(
            "INSERT INTO requests(ordinal, id, request, reply, at) VALUES (1, x'00ff', NULL, x'', 5)")
        let log = try SQLiteRequestLog(
            database: database, identity: "store-a", retention: RequestIDRetention(), trimInterval: 256,
            clock: { 1_000 })
        #expect {
            try log.load(path: "/srv/countries.db")
        } throws: { error in
            (error as? StoreOpenError)?.code == .corrupt && "\(error)".contains("/srv/countries.db")
        }
    }

    /// Old ids are deleted `trimInterval` at a time: none before, all that may go then.
    @Test func idsAreDeletedOnlyATrimIntervalAtATime() throws {
        let database = try Database(path: ":memory:")
        var retention = RequestIDRetention()
        retention.maximumCount = 4
        let log = try makeLog(database, retention: retention, trimInterval: 3)
        func rows() throws -> SQLiteValue? {
            try database.prepare("SELECT count(*) FROM requests").rows().first?.first
        }
        for index in 0..<6 { try commit([request("id-\(index)", "r\(index)")], on: log, in: database) }
        #expect(try rows() == .integer(6), "two past the maximum wait for the next trim")
        #expect(try log.rememberedRequest(for: "id-1") == nil, "forgotten already")
        #expect(try log.rememberedRequest(for: "id-2")?.reply == Array("r2".utf8))
        try commit([request("id-6", "r6")], on: log, in: database)
        #expect(try rows() == .integer(4), "three deleted at once")
        #expect(try log.rememberedRequest(for: "id-2") == nil)
        #expect(try log.rememberedRequest(for: "id-3")?.reply == Array("r3".utf8))
        #expect(try log.rememberedRequest(for: "id-6")?.reply == Array("r6".utf8))
    }
}
