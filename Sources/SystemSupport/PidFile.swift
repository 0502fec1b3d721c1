import Foundation
@preconcurrency import Glibc

/// `serve --pidfile PATH`: the process id, for init systems and scripts; removed at a clean exit.
///
/// Held with flock for the life of the process (a ``LockFile``): a second service is refused
/// while the first lives, and the stale file a SIGKILL leaves is taken over.
///
/// It never writes into, truncates or removes a file that is not its own. The new file is
/// written whole and locked under a temporary name in the same directory, then linked into
/// place when nothing is there, or renamed over a stale pid file: a regular file of this user
/// that holds at most a process id, locked by nobody, whose process is not running. Anything
/// else at the path (the store, another file, a symbolic link, a directory, a FIFO, another
/// program's pid file whose process runs) is refused and left as it was. At exit the file is
/// removed only if it is still the one written and still holds this process's id.
public struct PidFile {
    private let file: LockFile
    private let text: String

    /// Why the pid file could not be claimed; the description says what to do.
    public struct ClaimError: Error, CustomStringConvertible {
        /// What went wrong and what to do.
        public var description: String
    }

    /// The largest file taken for a stale pid file: a process id and a newline, with room for
    /// blank space around it.
    static let maximumSize = 32

    /// Writes this process's id to `path` and holds it, refusing (and changing nothing) when
    /// another live process holds it or when `path` is anything but a stale pid file.
    public static func claim(_ path: String) throws(ClaimError) -> PidFile {
        let text = "\(getpid())\n"
        let temporary = PrivateFiles.temporaryPath(beside: path)
        let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw cannotWrite(path, errno) }
        // Readable by all whatever the umask (the process's, which tests running at once may
        // change): scripts and init systems read it; it holds only a pid.
        fchmod(descriptor, 0o644)
        var placed = false
        defer { if !placed { close(descriptor) } }
        // Whole and locked before it has its name: nobody reads a half-written pid file, and
        // nobody takes it over as stale.
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            unlink(temporary)
            throw cannotWrite(path, failure)
        }
        for _ in 0..<100 {
            // link(2) never replaces: it fails when anything is at `path`.
            if link(temporary, path) == 0 {
                unlink(temporary)
                placed = true
                return PidFile(file: LockFile(path: path, descriptor: descriptor), text: text)
            }
            let failure = errno
            guard failure == EEXIST else {
                unlink(temporary)
                throw cannotWrite(path, failure)
            }
            let stale: Int32?
            do {
                stale = try stalePidFile(at: path)
            } catch {
                unlink(temporary)
                throw error
            }
            // nil: it went away meanwhile (its holder stopped); link again.
            guard let stale else { continue }
            // Locked by us and still at `path`: no other claimant can replace it meanwhile.
            let renamed = rename(temporary, path) == 0
            let renameFailure = errno
            close(stale)
            guard renamed else {
                unlink(temporary)
                throw cannotWrite(path, renameFailure)
            }
            placed = true
            return PidFile(file: LockFile(path: path, descriptor: descriptor), text: text)
        }
        unlink(temporary)
        throw cannotWrite(path, EAGAIN)
    }

    /// Removes the file if it is still the one written and still holds this process's id, and
    /// drops the lock.
    public func release() {
        file.release(ifItHolds: text)
    }

    /// The file at `path`, open, locked by us and still there, when it is a stale pid file; nil
    /// when nothing is there any more. Throws, having changed nothing, for anything else.
    private static func stalePidFile(at path: String) throws(ClaimError) -> Int32? {
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let failure = errno
            switch failure {
            case ENOENT: return nil
            case ELOOP:
                throw refused(
                    path, "is a symbolic link, and a pid file is never written through one",
                    "pass the path it points to, or another --pidfile")
            default: throw cannotWrite(path, failure)
            }
        }
        var kept = false
        defer { if !kept { close(descriptor) } }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw cannotWrite(path, errno) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw refused(path, "is a directory", "pass a file in it, like \(path)/countries.pid")
        default:
            throw refused(path, "is not a regular file (a FIFO, socket or device)", "pass another --pidfile")
        }
        guard status.st_uid == geteuid() else {
            throw refused(
                path,
                "belongs to uid \(status.st_uid), not to this user, so it is not this service's pid file",
                "pass another --pidfile")
        }
        guard status.st_size <= maximumSize,
            let contents = LockFile.contents(descriptor, upTo: maximumSize + 1),
            let pid = processID(in: contents)
        else {
            throw refused(
                path,
                "does not hold just a process id (\(status.st_size) bytes: the store, or another file?), so it is not a pid file",
                "pass another --pidfile (a path where nothing is, or a stale pid file)")
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            guard failure == EWOULDBLOCK else { throw cannotWrite(path, failure) }
            // Replaced since it was opened (taken over meanwhile): look at the new one.
            guard LockFile.fileStatus(descriptor, stillAt: path) != nil else { return nil }
            throw ClaimError(
                description:
                    "the pid file \(path) is held by process \(pid.map { "\($0)" } ?? "(unknown)"), a running countries serve; stop it first, or pass another --pidfile"
            )
        }
        guard LockFile.fileStatus(descriptor, stillAt: path) != nil else { return nil }
        // Not locked, so no countries serve holds it; a running process with that id is another
        // program, whose pid file this may well be. Our own id is a restart in a fresh pid
        // namespace (a container's pid 1), not another program.
        if let pid, pid != getpid(), kill(pid, 0) == 0 || errno == EPERM, !isZombie(pid) {
            throw refused(
                path,
                "names process \(pid), which is running but does not hold the file (another program's pid file?)",
                "pass another --pidfile, or remove \(path) if process \(pid) is not what it was written for")
        }
        kept = true
        return descriptor
    }

    /// Whether process `pid` has ended and waits for its parent to reap it: it still answers
    /// `kill(pid, 0)`, but runs no more (a script that restarts after `kill -9` without `wait`).
    /// Its state is the field after the name in `/proc/PID/stat`, the name in parentheses.
    static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    /// The process id a pid file holds: `.some(nil)` when it holds only blank space (a file made
    /// by hand ahead of time), nil when it holds anything but one decimal id.
    static func processID(in contents: String) -> pid_t?? {
        let digits = contents.trimmingCharacters(in: .whitespacesAndNewlines)
        if digits.isEmpty { return .some(nil) }
        guard digits.utf8.count <= 10, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = pid_t(digits)
        else { return nil }
        return .some(value > 0 ? value : nil)
    }

    private static func refused(_ path: String, _ what: String, _ todo: String) -> ClaimError {
        ClaimError(description: "--pidfile \(path) \(what); nothing was changed: \(todo)")
    }

    private static func cannotWrite(_ path: String, _ number: Int32) -> ClaimError {
        ClaimError(
            description:
                "cannot write the pid file \(path): \(String(cString: strerror(number))); its directory must exist and be writable, or pass another --pidfile"
        )
    }
}
