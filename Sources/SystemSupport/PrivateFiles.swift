import Foundation
@preconcurrency import Glibc

/// Files only their owner may read: the store (the list and every remembered reply), its
/// `-wal`, `-shm` and `.lock`, and secret key files. See docs/SECURITY.md, "File modes".
public enum PrivateFiles {
    /// The permission bits a private file may not have: any for group or others.
    public static let sharedBits: mode_t = 0o077

    /// Throws when the secret key file at `path` is open to group or others (any of the 0o077
    /// bits), as ssh refuses such a private key: someone else may have read it, or may replace
    /// it. A file that cannot be examined is left to the reader to report.
    public static func checkSecretKey(_ path: String) throws(PrivateFileError) {
        guard let mode = mode(of: path), mode & sharedBits != 0 else { return }
        throw PrivateFileError(path: path, mode: mode)
    }

    /// The permission bits of the file at `path` (following links), or nil when it cannot be
    /// examined.
    public static func mode(of path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    /// Creates an empty file with mode 0600 when nothing is at `path`, so SQLite (which creates
    /// a database 0644, and its `-wal` and `-shm` with the database's mode) makes all three
    /// private. Failures are left for the opener to report.
    @discardableResult
    public static func createIfMissing(_ path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return false }
        fchmod(descriptor, 0o600)  // whatever the umask said
        close(descriptor)
        return true
    }

    /// The size of the file at `path`, or nil when it cannot be examined.
    public static func size(of path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int(status.st_size)
    }

    /// Takes group and other bits off an existing file; returns its former mode when it changed.
    public static func tighten(_ path: String) -> mode_t? {
        guard let mode = mode(of: path), mode & sharedBits != 0 else { return nil }
        guard chmod(path, mode & ~sharedBits) == 0 else { return nil }
        return mode
    }

    /// A name of its own beside `path` (hidden, with this process's id and a random part), so a
    /// file written under it and renamed to `path` stays in one file system.
    public static func temporaryPath(beside path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return "\(directory).\(name).\(getpid())-\(String(UInt32.random(in: .min ... .max), radix: 16)).tmp"
    }

    /// Flushes the directory holding `path` to disk, so a name just given there survives a crash.
    public static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// `0644` for a log line.
    public static func octal(_ mode: mode_t) -> String {
        "0" + String(mode, radix: 8)
    }
}

/// A secret key file is open to group or others: what to do about it.
public struct PrivateFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// Its permission bits.
    public var mode: mode_t

    /// Says which file, its mode, and the fix.
    public var description: String {
        let who = mode & 0o044 != 0 ? "readable" : "writable"
        return
            "\(path) is \(who) by group or others (mode \(PrivateFiles.octal(mode))); a secret must be private: run `chmod 600 \(path)`"
    }
}
