import CountriesCore
import Foundation
import SQLite

/// The durable store: the list, its seq, the last events (for `history`) and the last request
/// ids with their replies (for exactly-once retries), in one SQLite file.
///
/// Every change goes in through ``commit(_:)``: one transaction that is on disk (WAL, full sync)
/// before the caller sends a reply or publishes an event. The store knows the protocol's values
/// but nothing of sockets.
final class Store {
    /// What a commit writes: the events of a batch of changes and the replies to remember.
    struct Batch {
        var events: [Event] = []
        var requestReplies: [(id: String, reply: Data)] = []

        var isEmpty: Bool { events.isEmpty && requestReplies.isEmpty }
    }

    /// Where the store lives: `:memory:` for a store that dies with the process.
    let path: String
    private let database: Database
    private let updateVisited: Statement
    private let insertCountry: Statement
    private let deleteCountry: Statement
    private let shiftDown: Statement
    private let unflipPositions: Statement
    private let deleteAllCountries: Statement
    private let insertEvent: Statement
    private let trimEvents: Statement
    private let saveSeq: Statement
    private let insertRequest: Statement
    private let trimRequests: Statement
    private let selectRequest: Statement
    private let selectEvents: Statement
    private let selectOldestEvent: Statement

    /// Opens (or creates, from `seed`) the store at `path`, or an in-memory one for `nil`.
    ///
    /// Throws a ``StoreError`` that says what is wrong with the file and what to do.
    init(path: String?, seed: [Country]) throws(StoreError) {
        let path = path ?? ":memory:"
        self.path = path
        do {
            if path != ":memory:" {
                let directory = (path as NSString).deletingLastPathComponent
                var isDirectory: ObjCBool = false
                if !directory.isEmpty,
                    !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
                        || !isDirectory.boolValue
                {
                    throw StoreError(
                        .cannotOpen, path: path,
                        "the directory \(directory) does not exist; create it or pass another --db")
                }
            }
            database = try Database(path: path, mode: .readWriteCreate)
            database.setBusyTimeout(milliseconds: 2_000)
            // SQLite opens a file it may not write (immutable, say) read-only without a word;
            // serving from it would refuse every change. Say so now instead.
            if database.isReadOnly {
                throw StoreError(
                    .readOnly, path: path,
                    "the file cannot be written (read-only, immutable or on a read-only file system); make it and its directory writable, or pass another --db"
                )
            }
            try Store.refuseForeignDatabase(database, path: path)
            try database.execute(
                path == ":memory:"
                    ? "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;"
                    : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;")
            try Store.createSchema(database, seed: seed)
            updateVisited = try database.prepare("UPDATE countries SET visited = ?2 WHERE position = ?1")
            insertCountry = try database.prepare(
                "INSERT INTO countries(position, name, visited) VALUES (?1, ?2, ?3)")
            deleteCountry = try database.prepare("DELETE FROM countries WHERE position = ?1")
            // Two steps so no intermediate row collides with a primary key still in use.
            shiftDown = try database.prepare(
                "UPDATE countries SET position = -(position - 1) WHERE position > ?1")
            unflipPositions = try database.prepare(
                "UPDATE countries SET position = -position WHERE position < 0")
            deleteAllCountries = try database.prepare("DELETE FROM countries")
            insertEvent = try database.prepare("INSERT INTO events(seq, topic, body) VALUES (?1, ?2, ?3)")
            trimEvents = try database.prepare("DELETE FROM events WHERE seq <= ?1")
            saveSeq = try database.prepare("UPDATE meta SET value = ?1 WHERE key = 'seq'")
            insertRequest = try database.prepare("INSERT OR REPLACE INTO requests(id, reply) VALUES (?1, ?2)")
            trimRequests = try database.prepare(
                "DELETE FROM requests WHERE ordinal <= (SELECT max(ordinal) FROM requests) - ?1")
            selectRequest = try database.prepare("SELECT reply FROM requests WHERE id = ?1")
            selectEvents = try database.prepare(
                "SELECT body FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2")
            selectOldestEvent = try database.prepare("SELECT min(seq) FROM events")
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError(sqlite: error, path: path, during: "opening")
        } catch {
            throw StoreError(.cannotOpen, path: path, "\(error)")
        }
    }

    /// Throws when the file is an SQLite database of something else, before anything (even the
    /// journal mode) is written to it: `--db` pointed at the wrong file must not adopt it.
    private static func refuseForeignDatabase(_ database: Database, path: String) throws {
        let tables = try database.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).rows().compactMap { row -> String? in
            guard case .text(let name)? = row.first else { return nil }
            return name
        }
        guard !tables.isEmpty, !tables.contains("meta") else { return }
        let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", ..." : "")
        throw StoreError(
            .corrupt, path: path,
            "it is an SQLite database but not a countries store (its tables: \(shown)); pass another --db")
    }

    private static func createSchema(_ database: Database, seed: [Country]) throws {
        try database.transaction {
            try database.execute(
                """
                CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS countries(
                    position INTEGER PRIMARY KEY, name TEXT NOT NULL, visited INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, body BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS requests(
                    ordinal INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, reply BLOB NOT NULL);
                """)
            let version = try database.prepare("SELECT value FROM meta WHERE key = 'schema'").rows()
            if let row = version.first {
                guard row.first == .integer(Store.schemaVersion) else {
                    throw StoreError(
                        .unsupported, path: database.path,
                        "the store has schema \(row.first.map { "\($0)" } ?? "?"); this version reads schema \(Store.schemaVersion)"
                    )
                }
                return
            }
            // A new store: the seed list at seq 0.
            try database.execute(
                "INSERT INTO meta(key, value) VALUES ('schema', \(Store.schemaVersion)), ('seq', 0)")
            let insert = try database.prepare(
                "INSERT INTO countries(position, name, visited) VALUES (?1, ?2, ?3)")
            for (position, country) in seed.enumerated() {
                try insert.run([
                    .integer(Int64(position)), .text(country.name), .integer(country.visited ? 1 : 0),
                ])
            }
        }
    }

    static let schemaVersion: Int64 = 1
}

// MARK: - Reading

extension Store {
    /// The state as stored, checked for consistency.
    func loadState() throws(StoreError) -> CountriesState {
        do {
            let seqRows = try database.prepare("SELECT value FROM meta WHERE key = 'seq'").rows()
            guard case .integer(let seq)? = seqRows.first?.first, seq >= 0 else {
                throw StoreError(.corrupt, path: path, "the store has no valid seq")
            }
            let rows = try database.prepare("SELECT position, name, visited FROM countries ORDER BY position")
                .rows()
            var countries: [Country] = []
            countries.reserveCapacity(rows.count)
            for (expected, row) in rows.enumerated() {
                guard row.count == 3, row[0] == .integer(Int64(expected)), case .text(let name) = row[1],
                    case .integer(let visited) = row[2]
                else {
                    throw StoreError(
                        .corrupt, path: path, "row \(expected) of the countries table is damaged")
                }
                countries.append(Country(name: name, visited: visited != 0))
            }
            return CountriesState(countries: countries, seq: UInt64(seq))
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw StoreError(sqlite: error, path: path, during: "reading")
        } catch {
            throw StoreError(.corrupt, path: path, "\(error)")
        }
    }

    /// The reply first sent to the request with this id, if it is remembered.
    func rememberedReply(for id: String) throws(SQLiteError) -> Data? {
        let rows = try selectRequest.rows([.text(id)])
        guard case .blob(let bytes)? = rows.first?.first else { return nil }
        return Data(bytes)
    }

    /// The first `limit` events after `since`, or nil when some of them are no longer kept, or
    /// when `since` is ahead of `currentSeq` (the caller's state is from another store: it must
    /// start over).
    func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(SQLiteError) -> [Event]? {
        if since > currentSeq { return nil }
        if since == currentSeq { return [] }
        let oldest = try oldestRetainedSeq(currentSeq: currentSeq)
        guard since + 1 >= oldest else { return nil }
        let rows = try selectEvents.rows([.integer(Int64(since)), .integer(Int64(clamping: max(0, limit)))])
        return rows.compactMap { row in
            guard case .blob(let bytes)? = row.first else { return nil }
            return try? Event.decode(Data(bytes))
        }
    }

    /// The oldest seq whose event is kept (`currentSeq + 1` when none is).
    func oldestRetainedSeq(currentSeq: UInt64) throws(SQLiteError) -> UInt64 {
        let rows = try selectOldestEvent.rows()
        if case .integer(let oldest)? = rows.first?.first { return UInt64(oldest) }
        return currentSeq + 1
    }

    /// Bytes the store takes on disk (the database and its write-ahead log).
    var sizeOnDisk: Int {
        guard path != ":memory:" else { return 0 }
        return [path, path + "-wal"].reduce(0) { total, file in
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            return total + ((attributes?[.size] as? Int) ?? 0)
        }
    }
}

// MARK: - Writing

extension Store {
    /// Writes a batch in one transaction: the rows each event touches, the events, the new seq
    /// and the remembered replies. Nothing is written when it throws.
    func commit(_ batch: Batch) throws(SQLiteError) {
        guard !batch.isEmpty else { return }
        do {
            try database.transaction {
                for event in batch.events {
                    try write(event)
                }
                if let last = batch.events.last {
                    try saveSeq.run([.integer(Int64(last.seq))])
                    let keepFrom = Int64(last.seq) - Int64(Limits.retainedEvents)
                    if keepFrom > 0 { try trimEvents.run([.integer(keepFrom)]) }
                }
                for (id, reply) in batch.requestReplies {
                    try insertRequest.run([.text(id), .blob([UInt8](reply))])
                }
                if !batch.requestReplies.isEmpty {
                    try trimRequests.run([.integer(Int64(Limits.retainedRequestIDs))])
                }
            }
        } catch let error as SQLiteError {
            throw error
        } catch {
            throw SQLiteError(code: 1, message: "\(error)", operation: "commit")
        }
    }

    private func write(_ event: Event) throws(SQLiteError) {
        switch event.kind {
        case .changed(let row):
            try updateVisited.run([.integer(Int64(row.index)), .integer(row.visited ? 1 : 0)])
        case .added(let row):
            try insertCountry.run([
                .integer(Int64(row.index)), .text(row.name), .integer(row.visited ? 1 : 0),
            ])
        case .removed(let row):
            try deleteCountry.run([.integer(Int64(row.index))])
            try shiftDown.run([.integer(Int64(row.index))])
            try unflipPositions.run()
        case .reset(let rows):
            try deleteAllCountries.run()
            for row in rows {
                try insertCountry.run([
                    .integer(Int64(row.index)), .text(row.name), .integer(row.visited ? 1 : 0),
                ])
            }
        }
        try insertEvent.run([
            .integer(Int64(event.seq)), .text(event.topic.rawValue), .blob([UInt8](event.encoded())),
        ])
    }
}

@available(*, unavailable) extension Store: Sendable {}
