import CSQLite

/// A compiled SQL statement, meant to be prepared once and run many times.
///
/// Binding, stepping and resetting allocate nothing beyond SQLite's own copy of bound text and
/// blobs. The statement keeps its ``Database`` object alive; like it, it must be used from one
/// thread at a time.
public final class Statement {
    /// The `sqlite3_stmt*`, finalized on deinit.
    private let handle: OpaquePointer
    private let database: Database

    init(handle: OpaquePointer, database: Database) {
        self.handle = handle
        self.database = database
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The SQL text, as given to ``Database/prepare(_:)``.
    public var sql: String {
        String(cString: sqlite3_sql(handle))
    }

    /// Resets the statement, then binds `values` to parameters `?1` ... `?n`.
    ///
    /// `values` must have exactly one value per parameter, so no stale value from an earlier run
    /// can linger; otherwise this throws `SQLITE_RANGE`.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        try bind { parameters in
            for value in values { parameters.value(value) }
        }
    }

    /// Resets the statement, then binds parameters `?1` ... `?n` in order with `parameters`,
    /// straight from the caller's values: no array of ``SQLiteValue``s, and a blob is not copied
    /// before SQLite's own copy.
    ///
    /// `parameters` must bind exactly one value per parameter, so no stale value from an earlier
    /// run can linger; otherwise this throws `SQLITE_RANGE`.
    public func bind(_ parameters: (inout StatementParameters) -> Void) throws(SQLiteError) {
        try checkOpen("bind")
        sqlite3_reset(handle)
        var bound = StatementParameters(handle: handle)
        parameters(&bound)
        if let failure = bound.failure {
            throw database.error(failure.code, "bind parameter \(failure.index) of \(abbreviated(sql))")
        }
        let expected = sqlite3_bind_parameter_count(handle)
        guard bound.count == expected else {
            throw SQLiteError(
                code: SQLITE_RANGE,
                message: "expected \(expected) values, got \(bound.count)",
                operation: "bind \(abbreviated(sql))"
            )
        }
    }

    /// Steps once; true when a row is available.
    ///
    /// After `false` (done) or an error, call ``reset()`` or ``bind(_:)`` before stepping again.
    public func step() throws(SQLiteError) -> Bool {
        try checkOpen("step")
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(rc, "step \(abbreviated(sql))")
        }
    }

    /// Binds `values`, steps until done (discarding any rows), and resets.
    public func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        try bind(values)
        try stepToEnd()
    }

    /// Binds the parameters with the closure `parameters`, steps until
    /// done (discarding any rows), and resets: the way to run a statement on a hot path.
    public func run(binding parameters: (inout StatementParameters) -> Void) throws(SQLiteError) {
        try bind(parameters)
        try stepToEnd()
    }

    private func stepToEnd() throws(SQLiteError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Binds `values`, collects every row, and resets.
    public func rows(_ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        try bind(values)
        defer { sqlite3_reset(handle) }
        let columns = columnCount
        var rows: [[SQLiteValue]] = []
        while try step() {
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(columns))
            for column in 0..<columns {
                row.append(value(at: column))
            }
            rows.append(row)
        }
        return rows
    }

    /// Makes the statement ready to step from the start again; bound values are kept.
    ///
    /// The result of `sqlite3_reset` is ignored: it only repeats the error the last ``step()``
    /// threw.
    public func reset() {
        sqlite3_reset(handle)
    }

    // MARK: - The current row (valid after step() returned true, until the next step or reset)

    /// The number of columns in a result row.
    public var columnCount: Int32 {
        sqlite3_column_count(handle)
    }

    /// The name of result column `column` (its `AS` name, if any).
    public func columnName(at column: Int32) -> String? {
        sqlite3_column_name(handle, column).map { String(cString: $0) }
    }

    /// Column `column` as an integer; NULL reads as 0 and other types convert as SQLite converts
    /// them.
    public func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// Column `column` as a real number; NULL reads as 0.
    public func double(at column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    /// Column `column` as text, or `nil` when it is NULL. Invalid UTF-8 is repaired with U+FFFD.
    public func string(at column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `column` as bytes, or `nil` when it is NULL; an empty blob reads as `[]`.
    public func bytes(at column: Int32) -> [UInt8]? {
        if isNull(at: column) { return nil }
        // sqlite3_column_blob before sqlite3_column_bytes, as SQLite documents, so the count is of
        // the blob.
        guard let blob = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }

    /// Whether column `column` is NULL.
    public func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// Column `column` in whichever storage class it has.
    public func value(at column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(int64(at: column))
        case SQLITE_FLOAT: .real(double(at: column))
        case SQLITE3_TEXT: .text(string(at: column) ?? "")
        case SQLITE_BLOB: .blob(bytes(at: column) ?? [])
        default: .null
        }
    }

    /// Throws `SQLITE_MISUSE` once the connection is closed: stepping a statement of a closed
    /// connection is undefined in SQLite.
    private func checkOpen(_ operation: String) throws(SQLiteError) {
        if !database.isOpen {
            throw SQLiteError(
                code: SQLITE_MISUSE,
                message: "the database connection is closed",
                operation: "\(operation) \(abbreviated(sql))"
            )
        }
    }
}

@available(*, unavailable)
extension Statement: Sendable {}
