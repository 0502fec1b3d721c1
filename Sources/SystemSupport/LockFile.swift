import Foundation
@preconcurrency import Glibc

/// A small file held with `flock(2)` for as long as this value (or the process) lives: the
/// one-writer lock beside a store (`PATH.lock`) and `serve --pidfile`.
///
/// The kernel drops an flock when the last descriptor of it closes, so a process killed with
/// SIGKILL leaves at worst a stale file, which the next ``acquire(_:)`` takes over; there is no
/// pid to check for liveness and no window between "is it stale?" and "take it". The file holds
/// what the holder wrote (its pid, its endpoints), for the message a second process prints.
///
/// Never point it at an SQLite database itself: closing any descriptor of that file would drop
/// the POSIX locks SQLite holds on it (see docs/RELIABILITY.md, "One writer per store").
public final class LockFile {
    /// The file's path.
    public let path: String
    private var descriptor: Int32

    /// Adopts `descriptor`, open on the file at `path` and already locked (``PidFile`` makes
    /// and places its file itself, so that it never opens another file for writing).
    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Creates (with `mode`, 0600 unless told) or opens the file and locks it, without waiting;
    /// an existing file with looser bits than `mode` gets `mode`. Throws
    /// ``LockFileError/held(path:holder:)`` with what the holder wrote when another process (or
    /// another `LockFile` in this one) holds it.
    public static func acquire(_ path: String, mode: mode_t = 0o600) throws(LockFileError) -> LockFile {
        // A holder that stops cleanly removes the file; one that opened it just before may then
        // lock the removed file. Checking that the locked file is still the one at `path` (and
        // trying again when not) keeps two holders from ever coexisting.
        for _ in 0..<100 {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode)
            guard descriptor >= 0 else { throw LockFileError.cannotCreate(path: path, errno: errno) }
            if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                let failure = errno
                defer { close(descriptor) }
                guard failure == EWOULDBLOCK else {
                    throw LockFileError.cannotCreate(path: path, errno: failure)
                }
                throw LockFileError.held(path: path, holder: holderText(descriptor))
            }
            guard let locked = fileStatus(descriptor, stillAt: path) else {
                close(descriptor)
                continue
            }
            // Its text is cut away below: only a lock file's own, never another file reached
            // through a second name (a hard link) or something that is not a file at all.
            guard locked.st_mode & S_IFMT == S_IFREG, locked.st_nlink == 1 else {
                close(descriptor)
                throw LockFileError.notALockFile(
                    path: path,
                    why: locked.st_mode & S_IFMT == S_IFREG
                        ? "it has \(locked.st_nlink) names (a hard link to another file?)"
                        : "it is not a regular file")
            }
            // A file left by an older version (or made by hand) may be readable by others.
            if locked.st_mode & 0o777 & ~mode != 0 { fchmod(descriptor, mode) }
            _ = ftruncate(descriptor, 0)
            return LockFile(path: path, descriptor: descriptor)
        }
        throw LockFileError.cannotCreate(path: path, errno: EAGAIN)
    }

    /// Replaces the file's contents with `text` (what a refused process will be told). Written
    /// over the old text and then cut to length, so a reader never finds it empty.
    public func write(_ text: String) {
        guard descriptor >= 0 else { return }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        if written == bytes.count { _ = ftruncate(descriptor, off_t(bytes.count)) }
    }

    /// Removes the file (if it is still this one and, when `expected` is given, still holds
    /// exactly that text) and drops the lock; later calls do nothing.
    public func release(ifItHolds expected: String? = nil) {
        guard descriptor >= 0 else { return }
        if Self.fileStatus(descriptor, stillAt: path) != nil,
            expected.map({ Self.contents(descriptor, upTo: $0.utf8.count + 1) == $0 }) ?? true
        {
            unlink(path)
        }
        close(descriptor)
        descriptor = -1
    }

    /// The first `limit` bytes of the file open as `descriptor`, as text (nil when unreadable).
    static func contents(_ descriptor: Int32, upTo limit: Int) -> String? {
        var buffer = [UInt8](repeating: 0, count: max(limit, 1))
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// The status of the file open as `descriptor` when it is still the one at `path` (not
    /// removed or replaced since it was opened); nil otherwise.
    static func fileStatus(_ descriptor: Int32, stillAt path: String) -> stat? {
        var open = stat()
        var current = stat()
        guard fstat(descriptor, &open) == 0, stat(path, &current) == 0, open.st_dev == current.st_dev,
            open.st_ino == current.st_ino
        else { return nil }
        return open
    }

    /// What the holder wrote. A holder writes right after it locks, so an empty file is read
    /// again for a moment before giving up on it.
    private static func holderText(_ descriptor: Int32) -> String {
        for attempt in 0..<20 {
            if let text = contents(descriptor, upTo: 4096), !text.isEmpty {
                if text.hasSuffix("\n") || attempt == 19 { return text }
            }
            usleep(10_000)
        }
        return ""
    }
}

@available(*, unavailable) extension LockFile: Sendable {}

/// A ``LockFile`` could not be taken.
public enum LockFileError: Error, Equatable, Sendable {
    /// Another process holds it; `holder` is what that process wrote (empty when it has not yet).
    case held(path: String, holder: String)
    /// The file cannot be created or opened (a missing or read-only directory, say).
    case cannotCreate(path: String, errno: Int32)
    /// Something is at the path that must not be written over: a file with a second name (its
    /// text would be cut away through this one), or not a regular file.
    case notALockFile(path: String, why: String)

    /// The holder's `key value` lines (`pid 123`, `command tcp://...`), in order.
    public var holderFields: [(key: String, value: String)] {
        guard case .held(_, let holder) = self else { return [] }
        return holder.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), String(parts[1]))
        }
    }
}
