import Foundation
@preconcurrency import Glibc

/// A position (store and seq) kept in a file, so a side-effect runner that is restarted goes
/// on where it stopped (`countries on-change --cursor FILE`).
///
/// The file is one JSON object, `{"seq": N, "store": "ID"}`, replaced atomically (a temporary
/// file written, synced and renamed over it, then the directory synced): after a crash it holds
/// the old position or the new one, never a torn one.
public struct CursorFile {
    /// Why the file cannot be used.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What went wrong with `path` and what to do.
        public var description: String
    }

    /// Where the cursor lives.
    public let path: String

    /// A cursor at `path` (nothing is read or written yet).
    public init(path: String) {
        self.path = path
    }

    /// The saved position, or nil when there is no file yet.
    public func read() throws(Failure) -> EventFeed.Position? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read the cursor file \(path); check its permissions")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let seqNumber = object["seq"] as? NSNumber, seqNumber.int64Value >= 0,
            seqNumber.doubleValue == Double(seqNumber.int64Value)
        else {
            throw Failure(
                description:
                    "the cursor file \(path) is not {\"seq\": N, \"store\": \"ID\"}; move it aside to start from now"
            )
        }
        let store = object["store"] as? String
        return EventFeed.Position(store: store, seq: seqNumber.uint64Value)
    }

    /// Replaces the file with `position`, atomically and durably.
    public func write(_ position: EventFeed.Position) throws(Failure) {
        var text = "{\"seq\":\(position.seq)"
        if let store = position.store,
            store.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C })
        {
            text += ",\"store\":\"\(store)\""
        }
        text += "}\n"
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced else {
            unlink(temporary)
            throw failure("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("cannot rename \(temporary) to \(path)")
        }
        let directory = (path as NSString).deletingLastPathComponent
        let directoryDescriptor = open(
            directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    private func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno))); check the directory of --cursor")
    }
}
