import CountriesCore
import CountriesStore
import Foundation
@preconcurrency import Glibc
import SQLite
import SystemSupport

/// The tables of an SQLite store and how a file becomes one (docs/RELIABILITY.md, section 8):
/// a file of something else is refused before anything is written to it, a new store gets the
/// seed at seq 0, every store is brought to ``schemaVersion`` by the same steps in one
/// transaction, and the store's identity is minted anew when the file is a copy.
enum SQLiteSchema {
    /// Throws when the file is an SQLite database of something else, before anything (even the
    /// journal mode) is written to it: `--db` pointed at the wrong file must not adopt it.
    static func refuseForeignDatabase(_ database: Database, path: String) throws {
        let tables = try database.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).rows().compactMap { row -> String? in
            guard case .text(let name)? = row.first else { return nil }
            return name
        }
        guard !tables.isEmpty, !tables.contains("meta") else { return }
        let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", ..." : "")
        throw StoreOpenError(
            .corrupt, path: path,
            "it is an SQLite database but not a countries store (its tables: \(shown)); pass another --db")
    }

    /// Creates the tables of schema 1 if they are missing (a new store gets the seed list at seq
    /// 0), then brings the store up to ``schemaVersion`` with ``migrate(_:from:)``: a new store and
    /// an old one go through the same steps, in one transaction.
    static func create(_ database: Database, seed: [Country]) throws {
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
                guard case .integer(let schema)? = row.first, (1...schemaVersion).contains(schema)
                else {
                    let shown = row.first.map { value in
                        switch value {
                        case .integer(let number): return "\(number)"
                        default: return "?"
                        }
                    }
                    throw StoreOpenError(
                        .unsupported, path: database.path,
                        "the store has schema \(shown ?? "?"); this version reads schemas 1 to \(schemaVersion): use a newer countries, or pass another --db"
                    )
                }
                try migrate(database, from: schema)
                return
            }
            // A new store: the seed list at seq 0, in schema 1, then the same steps as any other.
            try database.execute("INSERT INTO meta(key, value) VALUES ('schema', 1), ('seq', 0)")
            let insert = try database.prepare(
                "INSERT INTO countries(position, name, visited) VALUES (?1, ?2, ?3)")
            for (position, country) in seed.enumerated() {
                try insert.run([
                    .integer(Int64(position)), .text(country.name), .integer(country.visited ? 1 : 0),
                ])
            }
            try migrate(database, from: 1)
        }
    }

    /// The schema this version writes.
    static let schemaVersion: Int64 = 4

    /// The steps from schema 1 onwards, in order, each with the schema it belongs to. A store at
    /// schema N runs every step of a schema above N. Add a step here (and raise
    /// ``schemaVersion``) rather than changing the tables above.
    static let migrationSteps: [(schema: Int64, sql: String)] = [
        // What each remembered change asked, so an id reused for another change is told from a
        // retry; rows remembered by schema 1 have none and answer as they did.
        (2, "ALTER TABLE requests ADD COLUMN request BLOB"),
        // The store's identity (docs/PROTOCOL.md, "Store identity") and the inode of the file it
        // was given in; filled by loadIdentity when empty.
        (2, "CREATE TABLE identity(store TEXT NOT NULL, inode INTEGER NOT NULL)"),
        // Request ids without a UNIQUE index or AUTOINCREMENT: both were pages written at every
        // commit (a random index leaf, sqlite_sequence); the store keeps the index in memory.
        (
            3,
            """
            CREATE TABLE requests_3(ordinal INTEGER PRIMARY KEY, id TEXT NOT NULL, reply BLOB NOT NULL, request BLOB);
            INSERT INTO requests_3(ordinal, id, reply, request) SELECT ordinal, id, reply, request FROM requests;
            DROP TABLE requests;
            ALTER TABLE requests_3 RENAME TO requests;
            """
        ),
        // When each id was remembered, so ids are kept by age as well as count (ids from before
        // have none, and count as old).
        (4, "ALTER TABLE requests ADD COLUMN at INTEGER"),
        // A reset's reply is the list it put back, which its event holds already: kept as the
        // event's seq (and an empty reply) while the event is kept.
        (4, "ALTER TABLE requests ADD COLUMN event INTEGER"),
        // The device of the file the identity was given in, beside its inode: a copy on another
        // file system may get the same inode number. Filled in by loadIdentity when empty.
        (4, "ALTER TABLE identity ADD COLUMN device INTEGER"),
    ]

    /// Runs the steps `from` lacks and records the new schema; inside the caller's transaction,
    /// so a store is migrated wholly or not at all.
    private static func migrate(_ database: Database, from schema: Int64) throws {
        guard schema < schemaVersion else { return }
        for step in migrationSteps where step.schema > schema {
            try database.execute(step.sql)
        }
        try database.execute("UPDATE meta SET value = \(schemaVersion) WHERE key = 'schema'")
    }

    /// The store's identity, minted when there is none yet (a new store, or one made before
    /// identities existed), and minted anew when the file is not the one the identity was given
    /// in (its inode differs: it was restored from a backup or copied). A copy may go on from
    /// the same seq as the original with other changes, so it must not pass for the original.
    /// A copy made by `countries backup` (``StoreBackup``) is marked so, and always gets a new
    /// identity, even once moved over the original file's inode.
    static func loadIdentity(_ database: Database, path: String) throws -> (String, String?) {
        try database.transaction {
            let (device, inode) = fileIdentity(of: path)
            let rows = try database.prepare("SELECT store, inode, device FROM identity").rows()
            let isBackup = try !database.prepare("SELECT 1 FROM meta WHERE key = ?1")
                .rows([.text(StoreBackup.metaKey)]).isEmpty
            if !isBackup, let row = rows.first, rows.count == 1, row.count == 3, case .text(let id) = row[0],
                StoreIdentity.isWellFormed(id), row[1] == .integer(inode)
            {
                if row[2] == .integer(device) { return (id, nil) }
                if row[2] == .null {
                    // Given before devices were kept (schema 3): the inode is all there is to go
                    // by, and it matches; keep the identity and note the device from now on.
                    try database.prepare("UPDATE identity SET device = ?1").run([.integer(device)])
                    return (id, nil)
                }
            }
            let note: String
            if isBackup {
                note =
                    "a new store identity: the file is a copy made by `countries backup` (restored), so subscribers start over"
                try database.prepare("DELETE FROM meta WHERE key = ?1").run([.text(StoreBackup.metaKey)])
            } else if rows.isEmpty {
                note = "a new store identity"
            } else if path == ":memory:" {
                note = "a new identity for this in-memory store"
            } else {
                note =
                    "a new store identity: the file is not the one its identity was given in (restored from a backup or copied), so subscribers start over"
            }
            let id = StoreIdentity.make()
            try database.execute("DELETE FROM identity")
            try database.prepare("INSERT INTO identity(store, inode, device) VALUES (?1, ?2, ?3)").run([
                .text(id), .integer(inode), .integer(device),
            ])
            return (id, note)
        }
    }

    /// The file's device and inode numbers, or -1 for both when there is no file (in memory).
    private static func fileIdentity(of path: String) -> (device: Int64, inode: Int64) {
        guard path != ":memory:", let file = FileIdentity(path: path) else { return (-1, -1) }
        return (Int64(bitPattern: file.device), Int64(bitPattern: file.inode))
    }
}
