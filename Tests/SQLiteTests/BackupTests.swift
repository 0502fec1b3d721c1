import Foundation
import SQLite
import Testing

/// The online backup (`Backup`, `Database.backup(to:)`): a whole, consistent copy of a database
/// that other connections go on writing.
@Suite struct BackupTests {
    /// A WAL database at `path` with `rows` rows in `t`.
    private static func source(_ path: String, rows: Int) throws -> Database {
        let database = try Database(path: path)
        try database.execute("PRAGMA journal_mode=WAL; CREATE TABLE t(x INTEGER PRIMARY KEY, text TEXT);")
        let insert = try database.prepare("INSERT INTO t(x, text) VALUES (?1, ?2)")
        try database.transaction {
            for row in 0..<rows {
                try insert.run([.integer(Int64(row)), .text(String(repeating: "x", count: 200))])
            }
        }
        return database
    }

    private static func count(_ database: Database) throws -> SQLiteValue? {
        try database.prepare("SELECT count(*) FROM t").rows().first?.first
    }

    @Test func copiesTheWholeDatabase() throws {
        try withTemporaryDirectory { directory in
            let source = try Self.source(directory + "/source.db", rows: 1_000)
            let copy = try Database(path: directory + "/copy.db")
            try source.backup(to: copy)
            #expect(try Self.count(copy) == .integer(1_000))
            #expect(try copy.pragma("quick_check") == .text("ok"))
            source.close()
            copy.close()
        }
    }

    @Test func copiesWhatIsCommittedWhileAnotherConnectionWrites() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/source.db"
            let writer = try Self.source(path, rows: 10)
            // The backup reads through a read-only connection of its own, as `countries backup`
            // reads a store that the service writes.
            let reader = try Database(path: path, mode: .readOnly)
            try writer.execute("BEGIN IMMEDIATE; INSERT INTO t(x, text) VALUES (10, 'late');")
            let copy = try Database(path: directory + "/copy.db")
            try reader.backup(to: copy)
            try writer.execute("COMMIT")
            #expect(try Self.count(copy) == .integer(10))
            #expect(try Self.count(writer) == .integer(11))
            for database in [writer, reader, copy] { database.close() }
        }
    }

    @Test func stepsReportProgressAndAFinishedBackupRefusesMore() throws {
        try withTemporaryDirectory { directory in
            let source = try Self.source(directory + "/source.db", rows: 1_000)
            let copy = try Database(path: directory + "/copy.db")
            let backup = try Backup(from: source, to: copy)
            #expect(try backup.step(pages: 1) == false)
            #expect(backup.pageCount > 1)
            #expect(backup.remaining == backup.pageCount - 1)
            while try !backup.step(pages: 5) {}
            #expect(backup.remaining == 0)
            try backup.finish()
            try backup.finish()
            let error = sqliteError { _ = try backup.step() }
            #expect(error?.code == 21)  // SQLITE_MISUSE
            #expect(try Self.count(copy) == .integer(1_000))
            source.close()
            copy.close()
        }
    }

    @Test func aDestinationInATransactionIsRefused() throws {
        try withTemporaryDirectory { directory in
            let source = try Self.source(directory + "/source.db", rows: 1)
            let copy = try Database(path: directory + "/copy.db")
            try copy.execute("CREATE TABLE u(y); BEGIN; INSERT INTO u VALUES (1);")
            let error = sqliteError { try source.backup(to: copy) }
            #expect(error?.operation.hasPrefix("backup ") == true, "\(String(describing: error))")
            try copy.execute("ROLLBACK")
            source.close()
            copy.close()
        }
    }
}
