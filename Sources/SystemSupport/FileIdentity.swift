@preconcurrency import Glibc

/// Which file a path names now: its device and inode numbers. Two paths (or one path at two
/// moments) with the same identity are the same file; a file renamed, replaced or deleted
/// leaves its path with another identity, or none.
public struct FileIdentity: Equatable, Sendable {
    /// The device the file is on.
    public let device: UInt64
    /// The file's inode number on that device.
    public let inode: UInt64

    /// The identity of the file at `path` (following symbolic links), or nil when there is none.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
