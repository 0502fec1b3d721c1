import CSQLite

/// A failed SQLite call: the extended result code, SQLite's own message, and what we were doing.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (extended codes are always on for connections opened by
    /// ``Database``).
    public let code: Int32
    /// The text of `sqlite3_errmsg` at the time of the failure, or our own text for misuse we catch
    /// first.
    public let message: String
    /// What we tried, e.g. `open /path/countries.db`, `prepare INSERT ...`, `commit`.
    public let operation: String

    /// Makes an error from its parts; ``Database`` and ``Statement`` build these, tests may too.
    public init(code: Int32, message: String, operation: String) {
        self.code = code
        self.message = message
        self.operation = operation
    }

    /// For example `commit failed: database or disk is full (SQLITE_FULL)`.
    public var description: String {
        "\(operation) failed: \(message) (\(resultCodeName(code)))"
    }

    /// The primary result code: the low byte of the extended code.
    public var primaryCode: Int32 { code & 0xff }

    /// Another connection holds a lock we need (`SQLITE_BUSY`); retrying later may work.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY }
    /// The disk, or SQLite's page limit, is full (`SQLITE_FULL`).
    public var isFull: Bool { primaryCode == SQLITE_FULL }
    /// A write was attempted on a read-only connection or file (`SQLITE_READONLY`).
    public var isReadOnly: Bool { primaryCode == SQLITE_READONLY }
    /// The file is damaged (`SQLITE_CORRUPT`) or is not an SQLite database at all
    /// (`SQLITE_NOTADB`).
    ///
    /// Both count: either way the file's contents cannot be trusted, and the remedy is the same.
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    /// The operating system reported an I/O failure (`SQLITE_IOERR`).
    public var isIOError: Bool { primaryCode == SQLITE_IOERR }
    /// The database file could not be opened or created (`SQLITE_CANTOPEN`).
    public var isCantOpen: Bool { primaryCode == SQLITE_CANTOPEN }
    /// A UNIQUE, NOT NULL, CHECK, FOREIGN KEY or other constraint was violated
    /// (`SQLITE_CONSTRAINT`).
    public var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }
}
