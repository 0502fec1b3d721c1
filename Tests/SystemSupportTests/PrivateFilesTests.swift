import Foundation
import Testing

@testable import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The secret-key mode check and the owner-only helpers for the store's files.
@Suite struct PrivateFilesTests {
    private final class Scratch {
        let directory = "/tmp/cst-priv-\(UUID().uuidString.prefix(8))"

        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }

        deinit {
            try? FileManager.default.removeItem(atPath: directory)
        }

        func file(_ name: String, mode: mode_t) throws -> String {
            let path = "\(directory)/\(name)"
            try "secret\n".write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, mode)
            return path
        }
    }

    @Test(arguments: [0o600, 0o400, 0o700])
    func anOwnerOnlyKeyIsAccepted(mode: Int) throws {
        let scratch = try Scratch()
        let path = try scratch.file("k.key", mode: mode_t(mode))
        try PrivateFiles.checkSecretKey(path)
    }

    @Test(arguments: [0o640, 0o644, 0o604, 0o660, 0o620, 0o602, 0o601, 0o610])
    func aKeyOpenToGroupOrOthersIsRefused(mode: Int) throws {
        let scratch = try Scratch()
        let path = try scratch.file("k.key", mode: mode_t(mode))
        #expect(throws: PrivateFileError(path: path, mode: mode_t(mode))) {
            try PrivateFiles.checkSecretKey(path)
        }
    }

    @Test func theMessageSaysWhatToRun() throws {
        let readable = PrivateFileError(path: "keys/server.key", mode: 0o644)
        #expect(readable.description.contains("keys/server.key is readable by group or others (mode 0644)"))
        #expect(readable.description.contains("`chmod 600 keys/server.key`"))
        let writable = PrivateFileError(path: "k", mode: 0o620)
        #expect(writable.description.contains("writable by group or others (mode 0620)"))
    }

    @Test func aMissingKeyIsLeftToTheReader() throws {
        try PrivateFiles.checkSecretKey("/nonexistent/k.key")
    }

    @Test func aLinkIsJudgedByItsTarget() throws {
        let scratch = try Scratch()
        let target = try scratch.file("k.key", mode: 0o644)
        let link = "\(scratch.directory)/link.key"
        symlink(target, link)
        #expect(throws: PrivateFileError.self) { try PrivateFiles.checkSecretKey(link) }
        chmod(target, 0o600)
        try PrivateFiles.checkSecretKey(link)
    }

    @Test func createIfMissingMakesAnOwnerOnlyFileWhateverTheUmask() throws {
        let scratch = try Scratch()
        let path = "\(scratch.directory)/new.db"
        let previous = umask(0)
        defer { umask(previous) }
        #expect(PrivateFiles.createIfMissing(path))
        #expect(PrivateFiles.mode(of: path) == 0o600)
        #expect(!PrivateFiles.createIfMissing(path), "an existing file is left alone")
    }

    @Test func tightenTakesOffGroupAndOtherBitsOnly() throws {
        let scratch = try Scratch()
        let loose = try scratch.file("a", mode: 0o664)
        #expect(PrivateFiles.tighten(loose) == 0o664)
        #expect(PrivateFiles.mode(of: loose) == 0o600)
        let tight = try scratch.file("b", mode: 0o600)
        #expect(PrivateFiles.tighten(tight) == nil)
        #expect(PrivateFiles.tighten("\(scratch.directory)/missing") == nil)
    }
}
