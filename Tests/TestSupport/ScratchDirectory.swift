import Foundation

/// A fresh directory of a test's own under /tmp, removed by ``remove()`` or when the last
/// reference goes. Short (`/tmp/PREFIX-xxxxxxxx`), since an ipc:// path has room for about 100
/// bytes.
public final class ScratchDirectory: Sendable {
    public let path: String

    /// Makes `/tmp/PREFIX-` and eight random hex digits.
    public init(prefix: String = "ct") throws {
        path = "/tmp/\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit { remove() }

    /// `path/name` (not created).
    public func file(_ name: String) -> String { "\(path)/\(name)" }

    /// `path/name`, created with its parents.
    public func directory(_ name: String) throws -> String {
        let full = file(name)
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }

    /// The text of `path/name`, or "" when it cannot be read.
    public func read(_ name: String) -> String {
        (try? String(contentsOfFile: file(name), encoding: .utf8)) ?? ""
    }

    /// An `ipc://` endpoint on a socket file in the directory.
    public func ipc(_ name: String) -> String { "ipc://" + file(name) }

    /// The permission bits of the file at `path` (following links), or nil when it cannot be
    /// examined.
    public static func mode(of path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    /// Deletes the directory and everything in it. Safe to call twice.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
