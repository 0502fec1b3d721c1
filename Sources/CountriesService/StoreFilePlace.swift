@preconcurrency import Glibc
import SystemSupport

/// The files of an SQLite store as they were when the service opened them: the database, its
/// write-ahead log and the log's shared-memory index. A file moved, replaced or deleted under
/// the service leaves the service writing where a restart will not read (docs/RELIABILITY.md,
/// "A store moved under the service"): a deleted `-wal` took every change acknowledged since
/// the last checkpoint with it, and a store renamed by hard link and removed let a second
/// service open the same file beside the first.
struct StoreFilePlace {
    /// The database's path.
    let path: String
    /// Each file's path and its identity when first seen (the log and its index may come after
    /// the database).
    private var files: [(path: String, identity: FileIdentity?)]
    /// What was found moved, once found: it stays so.
    private(set) var lost: String?

    /// The place of the store at `path`, taken now.
    init(path: String) {
        self.path = path
        // SQLite names the log and its index after the file a link resolves to.
        let resolved =
            realpath(path, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? path
        files = [path, resolved + "-wal", resolved + "-shm"].map { ($0, FileIdentity(path: $0)) }
    }

    /// Why the store is no longer where it was opened, or nil. When its database is still in
    /// place but its log or index is not, `checkpoint` is called first to copy the changes the
    /// log holds into the database (and returns why it could not, or nil); a database that moved
    /// is left to SQLite's own rule, which checkpoints no database that moved.
    mutating func check(checkpoint: () -> String?) -> String? {
        if let lost { return lost }
        for index in files.indices {
            let current = FileIdentity(path: files[index].path)
            guard let opened = files[index].identity else {
                files[index].identity = current
                continue
            }
            guard current != opened else { continue }
            let file = files[index].path
            if index == 0 {
                lost =
                    "the store file \(path) was moved, replaced or deleted while the service ran: changes are refused from now on. The changes committed until then are in the file the service opened, with the newest in \(path)-wal: put that file back at \(path), beside its -wal, before starting the service again"
            } else if let failure = checkpoint() {
                lost =
                    "\(file) was deleted or replaced while the service ran: changes are refused from now on, and the changes committed since the last checkpoint could not be copied into \(path) (\(failure)); do not remove \(path), and start the service again"
            } else {
                lost =
                    "\(file) was deleted or replaced while the service ran: changes are refused from now on; the changes committed until then were copied into \(path). Start the service again"
            }
            return lost
        }
        return nil
    }
}
