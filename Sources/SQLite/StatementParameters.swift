import CSQLite

/// Tells SQLite to copy bound text and blobs before the bind call returns.
///
/// `SQLITE_TRANSIENT` is a cast macro (`(sqlite3_destructor_type)-1`) that Swift does not import.
private var transient: sqlite3_destructor_type {
    unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// The parameters of one run of a ``Statement``, bound in order from `?1` straight from the
/// caller's values (``Statement/run(binding:)``).
///
/// SQLite copies text and blobs as they are bound, so the caller's bytes need to live only for
/// the call that binds them: a blob can be bound from any contiguous buffer without first
/// becoming an array. The first bind SQLite refuses is kept, and the run throws it after the
/// binding closure returns, so binding itself never throws.
public struct StatementParameters {
    private let handle: OpaquePointer
    /// The number of parameters bound so far.
    public private(set) var count: Int32 = 0
    /// The first refused bind: SQLite's result code and the parameter's index.
    private(set) var failure: (code: Int32, index: Int32)?

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    /// Binds SQL `NULL` to the next parameter.
    public mutating func null() {
        next { handle, index in sqlite3_bind_null(handle, index) }
    }

    /// Binds a 64-bit signed integer to the next parameter.
    public mutating func integer(_ value: Int64) {
        next { handle, index in sqlite3_bind_int64(handle, index, value) }
    }

    /// Binds a real number to the next parameter.
    public mutating func real(_ value: Double) {
        next { handle, index in sqlite3_bind_double(handle, index, value) }
    }

    /// Binds UTF-8 text to the next parameter, embedded NUL characters included.
    public mutating func text(_ value: String) {
        var text = value
        next { handle, index in
            // Binding a null pointer would bind NULL, so empty text gets a real (empty) C string.
            if text.isEmpty { return sqlite3_bind_text(handle, index, "", 0, transient) }
            // An explicit byte count keeps text with embedded NUL characters whole.
            return text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_bind_text64(
                        handle, index, chars.baseAddress, sqlite3_uint64(chars.count), transient,
                        UInt8(SQLITE_UTF8))
                }
            }
        }
    }

    /// Binds the bytes to the next parameter as a blob; an empty buffer is an empty blob, not
    /// `NULL`.
    public mutating func blob(_ bytes: UnsafeRawBufferPointer) {
        next { handle, index in
            // A zero-length zeroblob is an empty blob; a null pointer would bind NULL.
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_zeroblob(handle, index, 0)
            }
            return sqlite3_bind_blob64(handle, index, base, sqlite3_uint64(bytes.count), transient)
        }
    }

    /// Binds `value` to the next parameter in its own storage class.
    public mutating func value(_ value: SQLiteValue) {
        switch value {
        case .null: null()
        case .integer(let number): integer(number)
        case .real(let number): real(number)
        case .text(let string): text(string)
        case .blob(let bytes): bytes.withUnsafeBytes { blob($0) }
        }
    }

    private mutating func next(_ bind: (OpaquePointer, Int32) -> Int32) {
        count += 1
        guard failure == nil else { return }
        let rc = bind(handle, count)
        if rc != SQLITE_OK { failure = (rc, count) }
    }
}

@available(*, unavailable)
extension StatementParameters: Sendable {}
