import CSQLite

/// Tells SQLite to copy bound text and blobs before the bind call returns.
///
/// `SQLITE_TRANSIENT` is a cast macro (`(sqlite3_destructor_type)-1`) that Swift does not import.
private var transient: sqlite3_destructor_type {
    unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// A compiled SQL statement, meant to be prepared once and run many times.
///
/// Binding, stepping and resetting allocate nothing beyond SQLite's own copy of bound text and blobs.
/// The statement keeps its ``Database`` object alive; like it, it must be used from one thread at a time.
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
    /// `values` must have exactly one value per parameter, so no stale value from an earlier run can
    /// linger; otherwise this throws `SQLITE_RANGE`.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        try checkOpen("bind")
        sqlite3_reset(handle)
        let expected = sqlite3_bind_parameter_count(handle)
        guard values.count == Int(expected) else {
            throw SQLiteError(
                code: SQLITE_RANGE,
                message: "expected \(expected) values, got \(values.count)",
                operation: "bind \(abbreviated(sql))"
            )
        }
        var index: Int32 = 1
        for value in values {
            let rc = bind(value, at: index)
            guard rc == SQLITE_OK else {
                throw database.error(rc, "bind parameter \(index) of \(abbreviated(sql))")
            }
            index += 1
        }
    }

    private func bind(_ value: SQLiteValue, at index: Int32) -> Int32 {
        switch value {
        case .null:
            return sqlite3_bind_null(handle, index)
        case .integer(let integer):
            return sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            return sqlite3_bind_double(handle, index, real)
        case .text(var text):
            // Binding a null pointer would bind NULL, so empty text gets a real (empty) C string.
            if text.isEmpty {
                return sqlite3_bind_text(handle, index, "", 0, transient)
            }
            // An explicit byte count keeps text with embedded NUL characters whole.
            return text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_bind_text64(
                        handle, index, chars.baseAddress, sqlite3_uint64(chars.count), transient,
                        UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let bytes):
            // Likewise an empty blob: a zero-length zeroblob is an empty blob, not NULL.
            if bytes.isEmpty {
                return sqlite3_bind_zeroblob(handle, index, 0)
            }
            return bytes.withUnsafeBytes { raw in
                sqlite3_bind_blob64(handle, index, raw.baseAddress, sqlite3_uint64(raw.count), transient)
            }
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
    /// The result of `sqlite3_reset` is ignored: it only repeats the error the last ``step()`` threw.
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

    /// Column `column` as an integer; NULL reads as 0 and other types convert as SQLite converts them.
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
        // sqlite3_column_blob before sqlite3_column_bytes, as SQLite documents, so the count is of the blob.
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

    /// Throws `SQLITE_MISUSE` once the connection is closed: stepping a statement of a closed connection is
    /// undefined in SQLite.
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
