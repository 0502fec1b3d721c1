import CountriesStore
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
        } else if error.isCantOpen {
            (code, advice) = (
                .cannotOpen, "check that the directory exists and is writable, or pass another --db"
            )
        } else {
            (code, advice) = (.other, "check the file, or pass another --db")
        }
        self.init(code, path: path, "\(activity) the store failed: \(error.description); \(advice)")
    }
}
