import Foundation
import SQLite
import Testing

/// Runs `body` with the path of a fresh directory that is removed afterwards, whatever happens.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("SQLiteTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory.path)
}

/// Runs `body` with a database in a fresh temporary file, closed and removed afterwards.
private func withDatabase<T>(_ body: (Database) throws -> T) throws -> T {
    try withTemporaryDirectory { directory in
        let database = try Database(path: directory + "/test.db")
        defer { database.close() }
        return try body(database)
    }
}

/// The error `body` throws, failing the test if it throws none or something else.
func sqliteError(_ body: () throws -> Void) -> SQLiteError? {
    do {
        try body()
        Issue.record("expected an SQLiteError, got none")
    } catch let error as SQLiteError {
        return error
    } catch {
        Issue.record("expected an SQLiteError, got \(error)")
    }
    return nil
}

private struct Abort: Error {}

@Suite struct DatabaseTests {
    @Test func walAndSynchronousPragmas() throws {
        try withDatabase { db in
            try db.execute("PRAGMA journal_mode=WAL")
            #expect(try db.pragma("journal_mode") == .text("wal"))
            try db.execute("PRAGMA synchronous=FULL")
            #expect(try db.pragma("synchronous") == .integer(2))
            #expect(try db.pragma("main.journal_mode") == .text("wal"))
            #expect(try db.pragma("no_such_pragma") == nil)
        }
    }

    @Test func pragmaRejectsAnythingButAName() throws {
        try withDatabase { db in
            let error = sqliteError { _ = try db.pragma("journal_mode=DELETE") }
            #expect(error?.code == 21)  // SQLITE_MISUSE
        }
    }

    @Test func inMemoryDatabaseWorks() throws {
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (42);")
        #expect(try db.prepare("SELECT x FROM t").rows() == [[.integer(42)]])
        #expect(db.path == ":memory:")
    }

    @Test func roundTripsEveryKindOfValue() throws {
        try withDatabase { db in
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
            let values: [SQLiteValue] = [
                .null,
                .integer(0), .integer(Int64.max), .integer(Int64.min), .integer(-1),
                .real(3.25), .real(-0.5),
                .text(""), .text("Moldova"), .text("Åland Islands, Côte d'Ivoire, Curaçao"),
                .text("日本 🇲🇩 emoji"), .text("nul\u{0}inside"),
                .blob([]), .blob([0, 1, 2, 255]), .blob(Array(repeating: 7, count: 10_000)),
            ]
            let insert = try db.prepare("INSERT INTO t(v) VALUES (?1)")
            for value in values {
                try insert.run([value])
                #expect(db.changes == 1)
            }
            #expect(db.lastInsertRowID == Int64(values.count))

            let rows = try db.prepare("SELECT v FROM t ORDER BY id").rows()
            #expect(rows == values.map { [$0] })

            // The typed accessors agree with the values, and NULL is distinct from empty.
            let select = try db.prepare("SELECT v, typeof(v) FROM t WHERE id = ?")
            try select.bind([.integer(1)])
            #expect(try select.step())
            #expect(select.isNull(at: 0))
            #expect(select.string(at: 0) == nil)
            #expect(select.bytes(at: 0) == nil)
            try select.bind([.integer(8)])
            #expect(try select.step())
            #expect(select.string(at: 0) == "")
            #expect(select.string(at: 1) == "text")
            #expect(!select.isNull(at: 0))
            try select.bind([.integer(13)])
            #expect(try select.step())
            #expect(select.bytes(at: 0) == [])
            #expect(select.string(at: 1) == "blob")
            try select.bind([.integer(3)])
            #expect(try select.step())
            #expect(select.int64(at: 0) == Int64.max)
            #expect(try !select.step())
            select.reset()
        }
    }

    @Test func transactionCommits() throws {
        try withDatabase { db in
            try db.execute("CREATE TABLE t(x)")
            let insert = try db.prepare("INSERT INTO t VALUES (?)")
            let returned = try db.transaction {
                #expect(!db.isAutocommit)
                try insert.run([.integer(1)])
                try insert.run([.integer(2)])
                return "done"
            }
            #expect(returned == "done")
            #expect(db.isAutocommit)
            #expect(try db.prepare("SELECT count(*) FROM t").rows() == [[.integer(2)]])
        }
    }

    @Test func transactionRollsBackWhenBodyThrows() throws {
        try withDatabase { db in
            try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            let insert = try db.prepare("INSERT INTO t VALUES (?)")
            #expect(throws: Abort.self) {
                try db.transaction {
                    try insert.run([.integer(2)])
                    try db.execute("UPDATE t SET x = 100")
                    throw Abort()
                }
            }
            #expect(db.isAutocommit)
            #expect(try db.prepare("SELECT x FROM t").rows() == [[.integer(1)]])
        }
    }

    @Test func transactionsDoNotNest() throws {
        try withDatabase { db in
            let error = sqliteError {
                try db.transaction { try db.transaction {} }
            }
            #expect(error?.operation == "begin transaction")
            #expect(db.isAutocommit)
        }
    }

    @Test func constraintViolationIsDescribed() throws {
        try withDatabase { db in
            try db.execute("CREATE TABLE countries(name TEXT NOT NULL UNIQUE)")
            let insert = try db.prepare("INSERT INTO countries(name) VALUES (?)")
            try insert.run([.text("France")])
            let error = sqliteError { try insert.run([.text("France")]) }
            #expect(error?.isConstraint == true)
            #expect(error?.code == 2067)  // SQLITE_CONSTRAINT_UNIQUE
            #expect(error?.primaryCode == 19)
            #expect(error?.isBusy == false)
            #expect(
                error?.description
                    == "step INSERT INTO countries(name) VALUES (?) failed: "
                    + "UNIQUE constraint failed: countries.name (SQLITE_CONSTRAINT_UNIQUE)"
            )
            // The statement is usable again after the failure.
            try insert.run([.text("Italy")])
            let notNull = sqliteError { try insert.run([.null]) }
            #expect(notNull?.isConstraint == true)
            #expect(notNull?.description.contains("NOT NULL constraint failed") == true)
        }
    }

    @Test func missingDirectoryCannotBeOpened() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/missing/countries.db"
            let error = sqliteError { _ = try Database(path: path) }
            #expect(error?.isCantOpen == true)
            #expect(error?.operation == "open \(path)")
            #expect(error?.description.hasSuffix("(SQLITE_CANTOPEN)") == true)
        }
    }

    @Test func readOnlyConnectionRefusesWrites() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/countries.db"
            let writer = try Database(path: path)
            try writer.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            writer.close()

            let reader = try Database(path: path, mode: .readOnly)
            #expect(try reader.prepare("SELECT x FROM t").rows() == [[.integer(1)]])
            let error = sqliteError { try reader.execute("INSERT INTO t VALUES (2)") }
            #expect(error?.isReadOnly == true)
            let viaStatement = sqliteError { try reader.prepare("DELETE FROM t").run() }
            #expect(viaStatement?.isReadOnly == true)
            reader.close()
        }
    }

    @Test func readWriteModeDoesNotCreate() throws {
        try withTemporaryDirectory { directory in
            let error = sqliteError { _ = try Database(path: directory + "/absent.db", mode: .readWrite) }
            #expect(error?.isCantOpen == true)
        }
    }

    /// A file that is not a database opens (SQLite reads lazily) but fails on first use with
    /// SQLITE_NOTADB, which ``SQLiteError/isCorrupt`` counts as corruption.
    @Test func garbageFileIsCorrupt() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/garbage.db"
            let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            try garbage.write(to: URL(fileURLWithPath: path))
            let db = try Database(path: path)
            let error = sqliteError { _ = try db.prepare("SELECT count(*) FROM sqlite_schema").rows() }
            #expect(error?.isCorrupt == true)
            #expect(error?.code == 26)  // SQLITE_NOTADB
            #expect(error?.description.contains("file is not a database") == true)
        }
    }

    @Test func statementsAreReusedManyTimes() throws {
        try withDatabase { db in
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
            let insert = try db.prepare("INSERT INTO t(name) VALUES (?)")
            let select = try db.prepare("SELECT name FROM t WHERE id = ?")
            try db.transaction {
                for i in 1...5_000 {
                    try insert.run([.text("country \(i)")])
                }
            }
            for i in stride(from: 1, through: 5_000, by: 7) {
                try select.bind([.integer(Int64(i))])
                #expect(try select.step())
                #expect(select.string(at: 0) == "country \(i)")
            }
            #expect(try select.rows([.integer(5_001)]) == [])
            #expect(try db.prepare("SELECT count(*) FROM t").rows() == [[.integer(5_000)]])
        }
    }

    @Test func bindRequiresOneValuePerParameter() throws {
        try withDatabase { db in
            let statement = try db.prepare("SELECT ?1 + ?2")
            let error = sqliteError { try statement.bind([.integer(1)]) }
            #expect(error?.code == 25)  // SQLITE_RANGE
            #expect(try statement.rows([.integer(1), .integer(2)]) == [[.integer(3)]])
        }
    }

    @Test func bindingClosureStoresWhatTheValuesStore() throws {
        try withDatabase { db in
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, c, d, e, f)")
            let insert = try db.prepare("INSERT INTO t(a, b, c, d, e, f) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            let long = [UInt8](repeating: 9, count: 5_000)
            try insert.run { parameters in
                parameters.null()
                parameters.integer(Int64.min)
                parameters.real(-0.5)
                parameters.text("nul\u{0}inside 🇲🇩")
                long.withUnsafeBytes { parameters.blob($0) }
                // An empty buffer, even one without an address, is an empty blob, not NULL.
                parameters.blob(UnsafeRawBufferPointer(start: nil, count: 0))
            }
            try insert.run { parameters in
                for value: SQLiteValue in [
                    .text(""), .blob([]), .blob([0, 255]), .integer(0), .null, .real(1),
                ] {
                    parameters.value(value)
                }
            }
            let rows = try db.prepare("SELECT a, b, c, d, e, f FROM t ORDER BY id").rows()
            #expect(
                rows == [
                    [
                        .null, .integer(Int64.min), .real(-0.5), .text("nul\u{0}inside 🇲🇩"), .blob(long),
                        .blob([]),
                    ],
                    [.text(""), .blob([]), .blob([0, 255]), .integer(0), .null, .real(1)],
                ])
        }
    }

    @Test func bindingClosureRequiresOneValuePerParameter() throws {
        try withDatabase { db in
            let statement = try db.prepare("SELECT ?1 + ?2")
            let few = sqliteError { try statement.run { $0.integer(1) } }
            #expect(few?.code == 25)  // SQLITE_RANGE
            #expect(few?.message == "expected 2 values, got 1")
            // SQLite itself refuses a third; the error names the parameter it refused.
            let many = sqliteError {
                try statement.run { parameters in
                    for number in 1...3 { parameters.integer(Int64(number)) }
                }
            }
            #expect(many?.code == 25)
            #expect(many?.operation == "bind parameter 3 of SELECT ?1 + ?2")
            try statement.bind { parameters in
                parameters.integer(1)
                parameters.integer(2)
            }
            #expect(try statement.step())
            #expect(statement.int64(at: 0) == 3)
            statement.reset()
        }
    }

    @Test func prepareTakesExactlyOneStatement() throws {
        try withDatabase { db in
            _ = try db.prepare("SELECT 1; -- trailing comment\n  ")
            let two = sqliteError { _ = try db.prepare("SELECT 1; SELECT 2") }
            #expect(two?.code == 21)  // SQLITE_MISUSE
            let syntax = sqliteError { _ = try db.prepare("SELEC 1") }
            #expect(syntax?.primaryCode == 1)  // SQLITE_ERROR
            #expect(syntax?.operation == "prepare SELEC 1")
            #expect(syntax?.message.contains("syntax error") == true)
        }
    }

    @Test func closeIsIdempotent() throws {
        try withDatabase { db in
            let statement = try db.prepare("SELECT 1")
            #expect(db.isOpen)
            db.close()
            db.close()
            #expect(!db.isOpen)
            #expect(db.isAutocommit)
            #expect(sqliteError { try db.execute("SELECT 1") }?.code == 21)
            #expect(sqliteError { _ = try statement.step() }?.code == 21)
            #expect(sqliteError { _ = try db.prepare("SELECT 1") }?.code == 21)
        }
    }

    @Test func busyTimeoutAndBusyErrors() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/busy.db"
            let first = try Database(path: path)
            let second = try Database(path: path)
            defer {
                first.close()
                second.close()
            }
            try first.execute("PRAGMA journal_mode=WAL; CREATE TABLE t(x);")
            second.setBusyTimeout(milliseconds: 10)
            try first.execute("BEGIN IMMEDIATE")
            let error = sqliteError { try second.transaction {} }
            #expect(error?.isBusy == true)
            try first.execute("COMMIT")
            try second.transaction { try second.execute("INSERT INTO t VALUES (1)") }
        }
    }

    @Test func errorDescriptionNamesTheCode() {
        let full = SQLiteError(code: 13, message: "database or disk is full", operation: "commit")
        #expect(full.description == "commit failed: database or disk is full (SQLITE_FULL)")
        #expect(full.isFull)
        let ioError = SQLiteError(code: 10 | (3 << 8), message: "disk I/O error", operation: "step")
        #expect(ioError.isIOError)
        #expect(ioError.description.hasSuffix("(SQLITE_IOERR_WRITE)"))
    }
}
