import CountriesSockets
import Foundation
@preconcurrency import Glibc
import SystemSupport

/// One writer per store: `PATH.lock` beside the database, held with flock for the life of the
/// service, naming the holder's pid and endpoints for a second service to print. See
/// docs/RELIABILITY.md, "One writer per store".
///
/// A sidecar file, not a lock on the database: SQLite holds POSIX (fcntl) locks on the database,
/// and closing any other descriptor of that file would drop them.
struct WriterLock {
    let file: LockFile

    /// The lock file's path for a store: beside the file the path resolves to, so two services
    /// that reach one database through different links still meet at one lock (SQLite, too,
    /// puts the `-wal` beside the resolved file).
    static func path(forStore store: String) -> String {
        if let resolved = resolve(store) { return resolved + ".lock" }
        let directory = (store as NSString).deletingLastPathComponent
        if let resolved = resolve(directory.isEmpty ? "." : directory) {
            return resolved + "/" + (store as NSString).lastPathComponent + ".lock"
        }
        return store + ".lock"
    }

    private static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Takes the lock for the store at `storePath`; nil for a store that is not a file (none,
    /// or SQLite's `:memory:`). Writes this process's pid into it at once.
    static func acquire(storePath: String?) throws(ServiceError) -> WriterLock? {
        guard let store = storePath, store != ":memory:" else { return nil }
        let path = path(forStore: store)
        let file: LockFile
        do {
            file = try LockFile.acquire(path)
        } catch {
            throw ServiceError(error.code, message(for: error, store: store))
        }
        file.write("pid \(getpid())\n")
        // The lock is named by path, and a hard link is a second path to the same file: two
        // services through two names would both write it and lose each other's changes.
        var info = stat()
        if stat(store, &info) == 0, info.st_nlink > 1 {
            file.release()
            throw ServiceError(
                .storeInUse,
                "store \(store): the file has \(info.st_nlink) names (hard links), so two services could write it under two names and lose each other's acknowledged changes; keep one name (`find / -xdev -samefile \(store)` lists them; remove the others), or use `cp` for a separate copy"
            )
        }
        return WriterLock(file: file)
    }

    /// Adds the bound endpoints to the holder's record.
    func announce(endpoints: [String]) {
        let roles = ["command", "events"]
        let lines = zip(roles, endpoints).map { "\($0) \($1)\n" }.joined()
        file.write("pid \(getpid())\n" + lines)
    }

    /// Removes the lock file and drops the lock.
    func release() { file.release() }

    /// What a refused service prints: who holds the store and what to do.
    static func message(for error: LockFileError, store: String) -> String {
        switch error {
        case .held:
            let fields = Dictionary(error.holderFields, uniquingKeysWith: { first, _ in first })
            var holder = "pid \(fields["pid"] ?? "unknown (it is just starting)")"
            if let command = fields["command"] { holder += ", commands on \(command)" }
            if let events = fields["events"] { holder += ", events on \(events)" }
            return
                "store \(store): in use by another countries serve (\(holder)); only one service may write a store. Stop that one first, point clients at it, or pass another --db"
        case .cannotCreate(let path, let number):
            let directory = (store as NSString).deletingLastPathComponent
            if number == ENOENT, !directory.isEmpty {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory),
                    isDirectory.boolValue
                else {
                    return
                        "store \(store): the directory \(directory) does not exist; create it or pass another --db"
                }
                // It exists, yet creating a file there says ENOENT: a file system that makes no
                // files (/proc, /sys), not a missing directory.
                return
                    "store \(store): cannot create its lock file \(path): \(String(cString: strerror(number))), though \(directory) exists: its file system does not let files be created there (like /proc); pass a --db on a disk"
            }
            return
                "store \(store): cannot create its lock file \(path): \(String(cString: strerror(number))); the directory must be writable (SQLite also makes the -wal and -shm files there): make it writable, or pass another --db"
        case .notALockFile(let path, let why):
            return
                "store \(store): its lock file \(path) cannot be used: \(why); nothing was changed. Remove \(path) if it is not needed, or pass another --db"
        }
    }
}

extension LockFileError {
    /// The service's error code: another holder is `storeInUse`, anything else a store problem.
    var code: ServiceError.Code {
        if case .held = self { return .storeInUse }
        return .store
    }
}
