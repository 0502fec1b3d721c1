import CountriesStore
@preconcurrency import Glibc
import SQLite

extension StateStoreError {
    /// Runs one SQLite call for a ``StateStore`` method (of the SQLite store or its request log):
    /// its failure in the store's terms.
    static func running<Value>(_ body: () throws(SQLiteError) -> Value) throws(StateStoreError) -> Value {
        do {
            return try body()
        } catch {
            throw StateStoreError(error.description)
        }
    }
}

extension StoreOpenError {
    /// The failure SQLite reported, with what to do about it.
    init(sqlite error: SQLiteError, path: String, during activity: String) {
        let code: Code
        let advice: String
        if error.isReadOnly {
            // SQLite says the same of the database when its -wal or -shm is what cannot be written.
            (code, advice) = (
                .readOnly,
                "make the file, its -wal and -shm files (\(path)-wal, \(path)-shm) and its directory writable, or pass another --db"
            )
        } else if error.isCorrupt {
            (code, advice) = (
                .corrupt, "it is not a countries store or it is damaged; move it aside or pass another --db"
            )
        } else if error.isFull {
            (code, advice) = (.full, "free some disk space")
        } else if error.isCantOpen, let owner = Self.unusableFile(path) {
            // A store put back by hand as another user (root restoring a backup for a service
            // that runs as its own user): the directory is fine, the file is not this user's.
            (code, advice) = (
                .cannotOpen,
                "\(path) \(owner), which this process (uid \(geteuid())) cannot read and write: give it to the service's user (chown), or pass another --db"
            )
        } else if error.isCantOpen {
            (code, advice) = (
                .cannotOpen, "check that the directory exists and is writable, or pass another --db"
            )
        } else {
            (code, advice) = (.other, "check the file, or pass another --db")
        }
        self.init(code, path: path, "\(activity) the store failed: \(error.description); \(advice)")
    }

    /// Whose the file at `path` is and its mode ("belongs to uid 0, mode 0600"), when it is
    /// there but this process may not read and write it; nil otherwise.
    private static func unusableFile(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, access(path, R_OK | W_OK) != 0 else { return nil }
        return "belongs to uid \(status.st_uid), mode 0\(String(status.st_mode & 0o7777, radix: 8))"
    }
}
