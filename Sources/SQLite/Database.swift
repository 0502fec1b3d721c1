import CSQLite

/// One connection to an SQLite database file (or `:memory:`).
///
/// A connection is opened with `SQLITE_OPEN_NOMUTEX`: SQLite does no locking of its own on it, so
/// it must be used from one thread or task at a time. That is why it is not `Sendable`; wrap it in
/// an actor or a mutex to share it.
public final class Database {
    /// How to open the file.
    public enum Mode: Sendable {
        /// Read and write, creating the file if it does not exist.
        case readWriteCreate
        /// Read and write an existing file.
        case readWrite
        /// Only read an existing file; every write fails with ``SQLiteError/isReadOnly``.
        case readOnly
    }

    /// The path the connection was opened with.
    public let path: String

    /// The `sqlite3*`, or `nil` once closed.
    private(set) var handle: OpaquePointer?
    /// `BEGIN IMMEDIATE` and `COMMIT`, compiled on first use: a service that commits every batch
    /// of requests would otherwise parse both each time.
    private var beginStatement: OpaquePointer?
    private var commitStatement: OpaquePointer?

    /// Opens (or, in `.readWriteCreate` mode, creates) the database at `path`; `":memory:"` opens a
    /// private in-memory database.
    ///
    /// Extended result codes are on, so ``SQLiteError/code`` is always the extended code.
    public init(path: String, mode: Mode = .readWriteCreate) throws(SQLiteError) {
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch mode {
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            // sqlite3_open_v2 usually hands back a handle even on failure; it holds the message and
            // must be closed.
            let error = SQLiteError(
                code: db.map { sqlite3_extended_errcode($0) } ?? rc,
                message: String(cString: db.map { sqlite3_errmsg($0) } ?? sqlite3_errstr(rc)),
                operation: "open \(path)"
            )
            sqlite3_close_v2(db)
            throw error
        }
        handle = db
    }

    deinit {
        close()
    }

    /// Closes the connection; later calls do nothing.
    ///
    /// Statements still alive keep the underlying connection allocated until they are released
    /// (`sqlite3_close_v2`), but they can no longer be stepped: they fail with `SQLITE_MISUSE`.
    public func close() {
        guard let handle else { return }
        sqlite3_finalize(beginStatement)
        sqlite3_finalize(commitStatement)
        beginStatement = nil
        commitStatement = nil
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Whether the main database is open read-only: asked for with ``Mode/readOnly``, or because
    /// SQLite could not open the file for writing (it then falls back to reading, silently) and
    /// every write will fail with ``SQLiteError/isReadOnly``. False once closed.
    public var isReadOnly: Bool {
        handle.map { sqlite3_db_readonly($0, "main") == 1 } ?? false
    }

    /// Whether ``close()`` has not been called yet.
    public var isOpen: Bool { handle != nil }

    /// Runs one or more SQL statements that return no rows we need: DDL, pragmas that set, scripts.
    public func execute(_ sql: String) throws(SQLiteError) {
        try execute(sql, operation: "execute \(abbreviated(sql))")
    }

    private func execute(_ sql: String, operation: @autoclosure () -> String) throws(SQLiteError) {
        let handle = try openHandle(operation())
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard rc == SQLITE_OK else {
            throw SQLiteError(
                code: rc,
                message: errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle)),
                operation: operation()
            )
        }
    }

    /// Compiles exactly one SQL statement, with `?` or `?NNN` parameters, for running any number of
    /// times.
    ///
    /// Trailing whitespace, semicolons and comments are fine; a second statement is an error rather
    /// than being silently ignored, as `sqlite3_prepare` would.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        let operation = "prepare \(abbreviated(sql))"
        let handle = try openHandle(operation)
        var statement: OpaquePointer?
        var error: SQLiteError?
        sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            // PERSISTENT: callers keep statements for the life of the connection.
            let flags = UInt32(SQLITE_PREPARE_PERSISTENT)
            var rc = sqlite3_prepare_v3(handle, text, -1, flags, &statement, &tail)
            guard rc == SQLITE_OK else {
                error = self.error(rc, operation)
                return
            }
            guard statement != nil else {
                error = SQLiteError(code: SQLITE_MISUSE, message: "no SQL statement", operation: operation)
                return
            }
            // Compile what is left over: only whitespace and comments compile to no statement at
            // all.
            var extra: OpaquePointer?
            rc = sqlite3_prepare_v2(handle, tail, -1, &extra, nil)
            if rc != SQLITE_OK || extra != nil {
                sqlite3_finalize(extra)
                error = SQLiteError(
                    code: SQLITE_MISUSE,
                    message: "prepare takes one statement; found more after the first",
                    operation: operation
                )
            }
        }
        guard error == nil, let statement else {
            sqlite3_finalize(statement)
            throw error ?? SQLiteError(code: SQLITE_MISUSE, message: "no SQL statement", operation: operation)
        }
        return Statement(handle: statement, database: self)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` ... `COMMIT`; rolls back and rethrows if `body` or
    /// `COMMIT` throws.
    ///
    /// `IMMEDIATE` takes the write lock up front, so a busy database fails at `BEGIN` rather than
    /// half-way through `body`. Transactions do not nest: calling this inside `body` throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try step(&beginStatement, "BEGIN IMMEDIATE", operation: "begin transaction")
        do {
            let result = try body()
            try step(&commitStatement, "COMMIT", operation: "commit")
            return result
        } catch {
            // Some failures (SQLITE_FULL, SQLITE_IOERR...) already rolled back; ROLLBACK would then
            // fail.
            if !isAutocommit {
                try? execute("ROLLBACK", operation: "rollback")
            }
            throw error
        }
    }

    /// Runs a statement that returns no rows, compiling it into `statement` the first time.
    private func step(_ statement: inout OpaquePointer?, _ sql: String, operation: String) throws(SQLiteError)
    {
        let handle = try openHandle(operation)
        if statement == nil {
            var compiled: OpaquePointer?
            let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
            guard rc == SQLITE_OK, let compiled else {
                sqlite3_finalize(compiled)
                throw error(rc, operation)
            }
            statement = compiled
        }
        let rc = sqlite3_step(statement)
        let failure = rc == SQLITE_DONE ? nil : error(rc, operation)
        sqlite3_reset(statement)
        if let failure { throw failure }
    }

    /// Reads a single-valued pragma such as `journal_mode` or `user_version`; `nil` when it yields
    /// no row (an unknown pragma, for instance).
    ///
    /// `name` may carry a schema prefix (`main.journal_mode`) but nothing else: it is spliced into
    /// the SQL. To set a pragma, use ``execute(_:)``.
    public func pragma(_ name: String) throws(SQLiteError) -> SQLiteValue? {
        let isIdentifier =
            !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a)
                    || (byte >= 0x61 && byte <= 0x7a) || byte == 0x5f || byte == 0x2e
            }
        guard isIdentifier else {
            throw SQLiteError(
                code: SQLITE_MISUSE,
                message: "not a pragma name",
                operation: "pragma \(abbreviated(name))"
            )
        }
        let statement = try prepare("PRAGMA \(name)")
        defer { statement.reset() }
        return try statement.step() ? statement.value(at: 0) : nil
    }

    /// The rowid of the most recent successful `INSERT` on this connection (0 when none, or
    /// closed).
    public var lastInsertRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Rows changed by the most recent `INSERT`, `UPDATE` or `DELETE` on this connection.
    public var changes: Int {
        handle.map { Int(sqlite3_changes64($0)) } ?? 0
    }

    /// Whether no transaction is open (also true once closed).
    public var isAutocommit: Bool {
        handle.map { sqlite3_get_autocommit($0) != 0 } ?? true
    }

    /// How long to retry when another connection holds a lock before failing with
    /// ``SQLiteError/isBusy``; 0 or less turns retrying off.
    public func setBusyTimeout(milliseconds: Int32) {
        guard let handle else { return }
        sqlite3_busy_timeout(handle, milliseconds)
    }

    // MARK: - Internals shared with Statement

    /// The live handle, or a misuse error naming `operation` if the connection is closed.
    func openHandle(_ operation: @autoclosure () -> String) throws(SQLiteError) -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(
                code: SQLITE_MISUSE,
                message: "the database connection is closed",
                operation: operation()
            )
        }
        return handle
    }

    /// The error for result code `rc`, with the connection's current message.
    func error(_ rc: Int32, _ operation: String) -> SQLiteError {
        let message =
            handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return SQLiteError(code: rc, message: message, operation: operation)
    }
}

@available(*, unavailable)
extension Database: Sendable {}

/// SQL shortened for error messages: whitespace runs collapsed, at most 100 characters.
func abbreviated(_ sql: String) -> String {
    let words = sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    return words.count <= 100 ? words : words.prefix(99) + "…"
}
