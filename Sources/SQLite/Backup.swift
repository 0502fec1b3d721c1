import CSQLite

/// An online backup: SQLite's `sqlite3_backup_init`, `_step` and `_finish`, copying the `main`
/// database of one connection into another's, page by page, while other connections (other
/// processes too) go on using the source.
///
/// One ``step(pages:)`` copies under one read transaction of the source, so a single
/// `step(pages: -1)` copies one consistent state: with WAL, writers go on meanwhile. Copying in
/// several smaller steps lets writers in between; a write by another connection then restarts the
/// copy at the next step, so a source that is written without pause may never finish that way.
///
/// Both connections must stay open, and unused otherwise, until ``finish()``.
public final class Backup {
    /// The `sqlite3_backup*`, or `nil` once finished.
    private var handle: OpaquePointer?
    /// The connections, kept alive (and their handles valid) while the backup runs.
    private let source: Database
    private let destination: Database

    /// Starts a backup of `source`'s main database into `destination`'s, replacing what the
    /// destination held. Throws when the destination is in a transaction or is the source.
    public init(from source: Database, to destination: Database) throws(SQLiteError) {
        let sourceHandle = try source.openHandle("backup \(source.path)")
        let destinationHandle = try destination.openHandle("backup to \(destination.path)")
        guard let handle = sqlite3_backup_init(destinationHandle, "main", sourceHandle, "main") else {
            // The error is left on the destination connection.
            throw destination.error(
                sqlite3_extended_errcode(destinationHandle), "backup \(source.path) to \(destination.path)")
        }
        self.handle = handle
        self.source = source
        self.destination = destination
    }

    deinit {
        if let handle { sqlite3_backup_finish(handle) }
    }

    /// Copies up to `pages` pages (all that are left when negative); returns true when the
    /// whole database is copied. A busy source (its busy timeout ran out) throws
    /// ``SQLiteError/isBusy``; a later step may go on.
    public func step(pages: Int32 = -1) throws(SQLiteError) -> Bool {
        guard let handle else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "the backup is finished", operation: operation)
        }
        let rc = sqlite3_backup_step(handle, pages)
        switch rc {
        case SQLITE_DONE: return true
        case SQLITE_OK: return false
        default:
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errstr(rc)), operation: operation)
        }
    }

    /// Pages still to copy, as of the last step.
    public var remaining: Int { handle.map { Int(sqlite3_backup_remaining($0)) } ?? 0 }

    /// Pages in the source, as of the last step.
    public var pageCount: Int { handle.map { Int(sqlite3_backup_pagecount($0)) } ?? 0 }

    /// Ends the backup and releases it; throws the error of the steps, if any (the destination
    /// then holds nothing usable). Later calls do nothing.
    public func finish() throws(SQLiteError) {
        guard let handle else { return }
        self.handle = nil
        let rc = sqlite3_backup_finish(handle)
        guard rc == SQLITE_OK else {
            throw destination.error(rc, operation)
        }
    }

    private var operation: String { "backup \(source.path) to \(destination.path)" }
}

@available(*, unavailable)
extension Backup: Sendable {}

extension Database {
    /// Copies this connection's main database into `destination`'s, whole, in one step: one
    /// consistent state of it, while other connections may go on writing (``Backup``).
    public func backup(to destination: Database) throws(SQLiteError) {
        let backup = try Backup(from: self, to: destination)
        do {
            while try !backup.step(pages: -1) {}
        } catch {
            try? backup.finish()
            throw error
        }
        try backup.finish()
    }
}
