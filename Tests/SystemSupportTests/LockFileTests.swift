import Foundation
import Testing

@testable import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The flock'd holder file behind one writer per store and `--pidfile`.
@Suite struct LockFileTests {
    private final class Scratch {
        let directory = "/tmp/cst-lock-\(UUID().uuidString.prefix(8))"
        var path: String { "\(directory)/x.lock" }

        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }

        deinit {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func aSecondHolderIsRefusedWithWhatTheFirstWrote() throws {
        let scratch = try Scratch()
        let first = try LockFile.acquire(scratch.path)
        first.write("pid 42\ncommand tcp://127.0.0.1:5555\n")
        #expect(
            throws: LockFileError.held(path: scratch.path, holder: "pid 42\ncommand tcp://127.0.0.1:5555\n")
        ) {
            _ = try LockFile.acquire(scratch.path)
        }
        first.release()
        let second = try LockFile.acquire(scratch.path)
        second.release()
    }

    @Test func aStaleFileIsTakenOverAndEmptied() throws {
        let scratch = try Scratch()
        try "pid 99999\n".write(toFile: scratch.path, atomically: false, encoding: .utf8)
        chmod(scratch.path, 0o644)
        let lock = try LockFile.acquire(scratch.path)
        defer { lock.release() }
        #expect(try String(contentsOfFile: scratch.path, encoding: .utf8) == "")
        #expect(PrivateFiles.mode(of: scratch.path) == 0o600, "a loose lock file is tightened")
    }

    @Test func droppingTheValueDropsTheLock() throws {
        let scratch = try Scratch()
        do {
            let lock = try LockFile.acquire(scratch.path)
            lock.write("pid 1\n")
        }
        // The file stays (as after SIGKILL) but nothing holds it.
        #expect(FileManager.default.fileExists(atPath: scratch.path))
        let again = try LockFile.acquire(scratch.path)
        again.release()
    }

    @Test func releaseRemovesTheFileAndWriteShortensIt() throws {
        let scratch = try Scratch()
        let lock = try LockFile.acquire(scratch.path)
        lock.write("pid 1234567\nevents ipc:///tmp/x\n")
        lock.write("pid 1\n")
        #expect(try String(contentsOfFile: scratch.path, encoding: .utf8) == "pid 1\n")
        lock.release()
        #expect(!FileManager.default.fileExists(atPath: scratch.path))
        lock.release()  // twice is harmless
    }

    @Test func aMissingDirectoryIsCannotCreate() {
        #expect(throws: LockFileError.cannotCreate(path: "/nonexistent/dir/x.lock", errno: ENOENT)) {
            _ = try LockFile.acquire("/nonexistent/dir/x.lock")
        }
    }

    @Test func holderFieldsParseKeyValueLines() {
        let error = LockFileError.held(path: "p", holder: "pid 7\ncommand ipc:///a b\n\njunk\n")
        #expect(error.holderFields.map(\.key) == ["pid", "command"])
        #expect(error.holderFields.map(\.value) == ["7", "ipc:///a b"])
    }
}
