import Foundation
import TestSupport
import Testing

@testable import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `serve --pidfile`: written whole under a temporary name and put in place only where nothing
/// is or where a stale pid file is; anything else is refused untouched, and at exit only the
/// file written, still holding this process's id, is removed.
@Suite struct PidFileTests {
    private let ours = "\(getpid())\n"

    /// Every name in the directory (a temporary file left behind would show here).
    private func names(_ scratch: ScratchDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).sorted()
    }

    private func inode(_ path: String) -> ino_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_ino : nil
    }

    private func claimFailure(_ path: String) -> String? {
        do {
            let file = try PidFile.claim(path)
            file.release()
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aFreshPathGetsThePidAndIsRemovedAtRelease() throws {
        let scratch = try ScratchDirectory(prefix: "pid")
        let path = scratch.file("countries.pid")
        let file = try PidFile.claim(path)
        #expect(scratch.read("countries.pid") == ours)
        #expect(names(scratch) == ["countries.pid"], "no temporary file is left")
        #expect(PrivateFiles.mode(of: path).map { $0 & 0o044 } == 0o044, "readable by all, as pid files are")
        file.release()
        #expect(names(scratch) == [])
        file.release()  // twice is harmless
    }

    @Test func aHeldPidFileIsRefusedNamingItsHolder() throws {
        let scratch = try ScratchDirectory(prefix: "pid")
        let path = scratch.file("countries.pid")
        let first = try PidFile.claim(path)
        defer { first.release() }
        #expect(
            claimFailure(path)
                == "the pid file \(path) is held by process \(getpid()), a running countries serve; stop it first, or pass another --pidfile"
        )
        #expect(scratch.read("countries.pid") == ours)
        #expect(names(scratch) == ["countries.pid"])
    }

    @Test func aStalePidFileIsReplaced() throws {
        // Left by a SIGKILL (a pid above pid_max runs nowhere), made empty ahead of time, or
        // naming this very process (a container's pid 1 restarted): each is taken over.
        for stale in ["2147483647\n", "", "  \n", " 99999999 ", ours, "0\n"] {
            let scratch = try ScratchDirectory(prefix: "pid")
            let path = scratch.file("countries.pid")
            #expect(FileManager.default.createFile(atPath: path, contents: Data(stale.utf8)))
            let before = inode(path)
            let file = try PidFile.claim(path)
            #expect(scratch.read("countries.pid") == ours, "\(stale.debugDescription)")
            #expect(inode(path) != before, "renamed over, not written into")
            #expect(names(scratch) == ["countries.pid"])
            file.release()
            #expect(names(scratch) == [])
        }
    }

    /// Claims `path` expecting a refusal that ends with "nothing was changed: ..." and checks
    /// that the file (or link, directory, FIFO) is exactly as it was and nothing else was made.
    private func expectRefusedUntouched(
        _ scratch: ScratchDirectory, _ path: String, saying expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var before = stat()
        lstat(path, &before)
        // Only a regular file is read: opening a FIFO to read it would wait for a writer.
        let isFile = before.st_mode & S_IFMT == S_IFREG
        let namesBefore = names(scratch)
        let bytesBefore = isFile ? FileManager.default.contents(atPath: path) : nil
        let failure = claimFailure(path)
        #expect(failure == expected, sourceLocation: sourceLocation)
        #expect(names(scratch) == namesBefore, "nothing made or removed", sourceLocation: sourceLocation)
        var after = stat()
        lstat(path, &after)
        #expect(
            after.st_ino == before.st_ino && after.st_mode == before.st_mode, sourceLocation: sourceLocation)
        #expect(
            after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
            "not written", sourceLocation: sourceLocation)
        if isFile {
            #expect(FileManager.default.contents(atPath: path) == bytesBefore, sourceLocation: sourceLocation)
        }
    }

    @Test func theStoreAndOtherFilesAreRefusedUntouched() throws {
        let scratch = try ScratchDirectory(prefix: "pid")
        // An SQLite store's first bytes and size; any file with more than a pid in it.
        let store = scratch.file("countries.db")
        #expect(
            FileManager.default.createFile(
                atPath: store, contents: Data("SQLite format 3\0".utf8) + Data(count: 4080)))
        expectRefusedUntouched(
            scratch, store,
            saying:
                "--pidfile \(store) does not hold just a process id (4096 bytes: the store, or another file?), so it is not a pid file; nothing was changed: pass another --pidfile (a path where nothing is, or a stale pid file)"
        )
        for contents in ["hello\n", "12 34\n", "pid 42\n", "-5\n", "12345678901\n", "4242\nmore\n"] {
            let other = scratch.file("other-\(contents.count)")
            #expect(FileManager.default.createFile(atPath: other, contents: Data(contents.utf8)))
            expectRefusedUntouched(
                scratch, other,
                saying:
                    "--pidfile \(other) does not hold just a process id (\(contents.utf8.count) bytes: the store, or another file?), so it is not a pid file; nothing was changed: pass another --pidfile (a path where nothing is, or a stale pid file)"
            )
        }
    }

    @Test func linksDirectoriesAndFIFOsAreRefusedUntouched() throws {
        let scratch = try ScratchDirectory(prefix: "pid")
        let target = scratch.file("target.pid")
        #expect(FileManager.default.createFile(atPath: target, contents: Data("2147483647\n".utf8)))
        let link = scratch.file("link.pid")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        expectRefusedUntouched(
            scratch, link,
            saying:
                "--pidfile \(link) is a symbolic link, and a pid file is never written through one; nothing was changed: pass the path it points to, or another --pidfile"
        )
        #expect(scratch.read("target.pid") == "2147483647\n", "the link's target is untouched")
        let dangling = scratch.file("dangling.pid")
        try FileManager.default.createSymbolicLink(
            atPath: dangling, withDestinationPath: scratch.file("nowhere"))
        expectRefusedUntouched(
            scratch, dangling,
            saying:
                "--pidfile \(dangling) is a symbolic link, and a pid file is never written through one; nothing was changed: pass the path it points to, or another --pidfile"
        )
        #expect(!FileManager.default.fileExists(atPath: scratch.file("nowhere")))

        let directory = try scratch.directory("run")
        expectRefusedUntouched(
            scratch, directory,
            saying:
                "--pidfile \(directory) is a directory; nothing was changed: pass a file in it, like \(directory)/countries.pid"
        )
        let fifo = scratch.file("fifo.pid")
        #expect(mkfifo(fifo, 0o644) == 0)
        expectRefusedUntouched(
            scratch, fifo,
            saying:
                "--pidfile \(fifo) is not a regular file (a FIFO, socket or device); nothing was changed: pass another --pidfile"
        )
    }

    @Test func anotherProgramsLivePidFileIsRefusedUntouched() throws {
        let scratch = try ScratchDirectory(prefix: "pid")
        // Not locked, so no countries serve holds it, and its process runs: init's pid file.
        let path = scratch.file("init.pid")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("1\n".utf8)))
        expectRefusedUntouched(
            scratch, path,
            saying:
                "--pidfile \(path) names process 1, which is running but does not hold the file (another program's pid file?); nothing was changed: pass another --pidfile, or remove \(path) if process 1 is not what it was written for"
        )
    }

    /// A process killed but not yet reaped (a script that restarts after `kill -9` without
    /// `wait`) still answers `kill(pid, 0)`: its pid file is stale all the same. Before, it was
    /// refused as another program's.
    @Test func aPidFileOfAnEndedUnreapedProcessIsStale() throws {
        let scratch = try ScratchDirectory(prefix: "pid")
        defer { scratch.remove() }
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for argument in argv { free(argument) } }
        try #require(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
        defer {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        #expect(eventually { PidFile.isZombie(pid) }, "the child never ended")
        #expect(kill(pid, 0) == 0, "an unreaped child still answers kill(pid, 0)")
        #expect(!PidFile.isZombie(getpid()))
        let path = scratch.file("serve.pid")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("\(pid)\n".utf8)))
        #expect(claimFailure(path) == nil)
    }

    @Test(.enabled(if: geteuid() == 0, "only root can make a file another user owns"))
    func aFileOfAnotherUserIsRefusedUntouched() throws {
        let scratch = try ScratchDirectory(prefix: "pid")
        let path = scratch.file("theirs.pid")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("2147483647\n".utf8)))
        #expect(chown(path, 12345, 12345) == 0)
        expectRefusedUntouched(
            scratch, path,
            saying:
                "--pidfile \(path) belongs to uid 12345, not to this user, so it is not this service's pid file; nothing was changed: pass another --pidfile"
        )
    }

    @Test func releaseRemovesOnlyTheFileWrittenStillHoldingOurPid() throws {
        let scratch = try ScratchDirectory(prefix: "pid")
        let path = scratch.file("countries.pid")

        // Rewritten in place by someone else: it is theirs now.
        let rewritten = try PidFile.claim(path)
        let descriptor = open(path, O_WRONLY | O_TRUNC)
        #expect(descriptor >= 0 && write(descriptor, "4242\n", 5) == 5)
        close(descriptor)
        rewritten.release()
        #expect(scratch.read("countries.pid") == "4242\n")
        try FileManager.default.removeItem(atPath: path)

        // Replaced by another file, even one with our pid in it: not the one written.
        let replaced = try PidFile.claim(path)
        let other = scratch.file("other")
        #expect(FileManager.default.createFile(atPath: other, contents: Data(ours.utf8)))
        #expect(rename(other, path) == 0)
        replaced.release()
        #expect(scratch.read("countries.pid") == ours)
    }

    @Test func aMissingDirectoryIsNamed() {
        #expect(
            claimFailure("/nonexistent/dir/countries.pid")
                == "cannot write the pid file /nonexistent/dir/countries.pid: No such file or directory; its directory must exist and be writable, or pass another --pidfile"
        )
    }

    @Test func processIDsAreDecimalAndNothingElse() {
        #expect(PidFile.processID(in: "42\n") == .some(42))
        #expect(PidFile.processID(in: " 42 \r\n") == .some(42))
        #expect(PidFile.processID(in: "") == .some(nil))
        #expect(PidFile.processID(in: "0") == .some(nil))
        #expect(PidFile.processID(in: "2147483647") == .some(2_147_483_647))
        for text in ["2147483648", "-1", "+1", "4 2", "0x10", "42\n43\n", "٤٢", "pid 42", "4.2"] {
            #expect(PidFile.processID(in: text) == nil, "\(text)")
        }
    }
}
