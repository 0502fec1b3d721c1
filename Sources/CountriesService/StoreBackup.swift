import CountriesStore
import Foundation
@preconcurrency import Glibc
import SQLite
import SystemSupport

/// `countries backup`: a consistent copy of an SQLite store, taken while a service serves it.
///
/// The store is read through a read-only connection of its own with SQLite's online backup
/// (one read transaction, so the copy is the state after one commit, while the service goes on
/// committing in WAL mode; it needs no lock the service holds). The copy is private like the
/// store (0600), written under a temporary name beside the target, made a single file (rollback
/// journal, no `-wal`), checked, marked as a backup, synced, then given its name: linked (never
/// replacing anything) or, with `force`, renamed over an existing regular file. A symbolic link
/// or anything but a regular file at the target, or the store's own files, are refused.
///
/// The mark (a `meta` row) makes a service that opens the copy give it a new store identity
/// (``SQLiteStore``), so it never passes for the store it was copied from: subscribers' positions,
/// `if_store` pins and remembered request ids belong to the original.
public enum StoreBackup {
    /// The `meta` key that marks a copy made by a backup; its value is when it was taken (ms
    /// since 1970).
    static let metaKey = "backup"

    /// What a backup copied.
    public struct Copy: Equatable, Sendable {
        /// The seq of the state copied.
        public var seq: UInt64
        /// The identity of the store copied (the copy gets a new one when served).
        public var identity: String
        /// The copy's size in bytes.
        public var bytes: Int
    }

    /// Copies the store at `storePath` to `target`; see ``StoreBackup``.
    public static func take(store storePath: String, to target: String, force: Bool)
        throws(StoreBackupError) -> Copy
    {
        try checkTarget(target, store: storePath, force: force)
        let source = try openStore(storePath)
        defer { source.close() }
        let temporary = PrivateFiles.temporaryPath(beside: target)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            // The temporary name is ours, not the user's: say what they gave (its directory).
            let failure = errno
            let directory = (target as NSString).deletingLastPathComponent
            throw cannotWrite(
                target, "cannot create a file in \(directory.isEmpty ? "." : directory)", failure)
        }
        fchmod(descriptor, 0o600)  // whatever the umask said
        close(descriptor)
        var placed = false
        defer {
            if !placed {
                for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporary + suffix) }
            }
        }
        let copy = try write(source, to: temporary, target: target, now: RequestIDWindow.nowMilliseconds)
        try sync(temporary, target: target)
        try place(temporary, at: target, store: storePath, force: force)
        placed = true
        PrivateFiles.syncDirectory(of: target)
        return Copy(seq: copy.seq, identity: copy.identity, bytes: PrivateFiles.size(of: target) ?? 0)
    }

    /// Throws unless `target` is free, or (with `force`) a regular file that is not one of the
    /// store's.
    private static func checkTarget(_ target: String, store: String, force: Bool) throws(StoreBackupError) {
        var status = stat()
        guard lstat(target, &status) == 0 else {
            guard errno == ENOENT else { throw cannotWrite(target, "cannot examine \(target)", errno) }
            return
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK:
            throw StoreBackupError(
                .refused,
                "\(target) is a symbolic link, and a backup is never written through one; pass the path it points to, or another file"
            )
        default:
            throw StoreBackupError(
                .refused,
                "\(target) is not a regular file (a directory, FIFO or device); pass a new file name")
        }
        for file in [store, store + "-wal", store + "-shm", store + ".lock"] {
            var other = stat()
            if stat(file, &other) == 0, other.st_dev == status.st_dev, other.st_ino == status.st_ino {
                throw StoreBackupError(
                    .refused,
                    "\(target) is \(file == store ? "the store itself" : "one of the store's files (\(file))"); give the backup a path of its own"
                )
            }
        }
        guard force else {
            throw StoreBackupError(.exists, "\(target) already exists; pass --force to replace it")
        }
    }

    /// A read-only connection to the store at `path`, checked to be a countries store.
    private static func openStore(_ path: String) throws(StoreBackupError) -> Database {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let failure = errno
            if failure == ENOENT {
                throw StoreBackupError(
                    .noStore,
                    "there is no store at \(path); pass the --db the service was started with (countries.db in its directory by default)"
                )
            }
            throw StoreBackupError(
                .cannotRead, "cannot read the store \(path): \(String(cString: strerror(failure)))")
        }
        do {
            let database = try Database(path: path, mode: .readOnly)
            // The service commits in WAL mode, so a reader waits only while a checkpoint or a
            // recovery holds the file.
            database.setBusyTimeout(milliseconds: 5_000)
            let tables = try database.prepare(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'identity', 'countries')"
            ).rows()
            guard tables.first?.first == .integer(3) else {
                database.close()
                throw StoreBackupError(
                    .noStore, "\(path) is not a countries store; pass the --db the service was started with")
            }
            return database
        } catch let error as StoreBackupError {
            throw error
        } catch {
            throw StoreBackupError(
                .cannotRead, "cannot read the store \(path): \(error); check the file and its directory")
        }
    }

    /// Copies `source` into the empty file at `temporary`, makes it a single file, checks it and
    /// marks it; returns the seq and identity copied.
    private static func write(_ source: Database, to temporary: String, target: String, now: Int64)
        throws(StoreBackupError) -> (seq: UInt64, identity: String)
    {
        do {
            let copy = try Database(path: temporary, mode: .readWrite)
            defer { copy.close() }
            try source.backup(to: copy)
            // The store is in WAL mode, and so would be the copy: one file is what a backup is.
            try copy.execute("PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;")
            guard case .text("ok")? = try copy.pragma("quick_check") else {
                throw StoreBackupError(
                    .cannotRead,
                    "the copy of the store failed SQLite's quick_check; check the store with `sqlite3`")
            }
            let seqRows = try copy.prepare(
                "SELECT max((SELECT value FROM meta WHERE key = 'seq'), ifnull((SELECT max(seq) FROM events), 0))"
            ).rows()
            let identityRows = try copy.prepare("SELECT store FROM identity").rows()
            guard case .integer(let seq)? = seqRows.first?.first, seq >= 0,
                case .text(let identity)? = identityRows.first?.first
            else {
                throw StoreBackupError(
                    .cannotRead, "the store has no valid seq or identity; check it with `status`")
            }
            try copy.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)").run([
                .text(metaKey), .integer(now),
            ])
            return (UInt64(seq), identity)
        } catch let error as StoreBackupError {
            throw error
        } catch let error as SQLiteError where error.isBusy {
            throw StoreBackupError(
                .cannotRead, "the store stayed busy for 5 s (\(error)); try again")
        } catch {
            throw StoreBackupError(.cannotWrite, "cannot write the backup \(target): \(error)")
        }
    }

    /// Flushes the copy to disk before it gets its name.
    private static func sync(_ temporary: String, target: String) throws(StoreBackupError) {
        let descriptor = open(temporary, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw cannotWrite(target, "cannot reopen \(temporary)", errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw cannotWrite(target, "cannot sync \(temporary)", errno) }
    }

    /// Gives the copy its name: linked (never replacing a file that appeared meanwhile), or
    /// renamed over the file that `force` replaces.
    private static func place(_ temporary: String, at target: String, store: String, force: Bool)
        throws(StoreBackupError)
    {
        if link(temporary, target) == 0 {
            unlink(temporary)
            return
        }
        let failure = errno
        guard failure == EEXIST else { throw cannotWrite(target, "cannot create \(target)", failure) }
        // Something appeared at the target since it was checked: check it again.
        try checkTarget(target, store: store, force: force)
        guard rename(temporary, target) == 0 else {
            throw cannotWrite(target, "cannot replace \(target)", errno)
        }
    }

    private static func cannotWrite(_ target: String, _ what: String, _ failure: Int32) -> StoreBackupError {
        StoreBackupError(
            .cannotWrite,
            "\(what): \(String(cString: strerror(failure))); check the directory of \(target), or pass another file"
        )
    }
}
