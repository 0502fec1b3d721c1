import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// One writer per store, and the pid file: a second `serve` on the same store (or pid file) is
/// refused at once with exit 73, naming the holder; the lock dies with its process, so SIGKILL
/// leaves nothing that blocks the next start. See docs/RELIABILITY.md, "One writer per store".
@Suite(.hangGuard())
struct OneWriterTests {
    @Test func aSecondServiceOnTheSameStoreExits73NamingTheFirstAndWritesNothing() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("countries.db")
        let first = try Service(in: sandbox, options: ["--db", db])
        defer { first.stop(signal: SIGKILL) }
        #expect(try first.run(["toggle", "France"]).exitCode == 0)
        let files = [db, db + "-wal", db + "-shm"]
        let before = files.map { FileManager.default.contents(atPath: $0) }

        let second = try Countries.run(
            [
                "serve", "--db", db, "--command", "ipc://" + sandbox.file("c2"), "--events",
                "ipc://" + sandbox.file("e2"),
            ], timeout: .seconds(10))
        #expect(second.exitCode == 73, "\(second)")
        #expect(second.duration < .seconds(2) * testSlowdown, "not at once: \(second)")
        #expect(second.stderr.contains("pid \(first.process.pid)"), "\(second)")
        #expect(second.stderr.contains(sandbox.commandEndpoint), "\(second)")
        #expect(second.stderr.contains(sandbox.eventsEndpoint), "\(second)")
        #expect(second.stderr.contains(db) && second.stderr.contains("another --db"), "\(second)")

        // The second neither bound its endpoints nor touched the store; the first still serves.
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("c2")))
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("e2")))
        #expect(files.map { FileManager.default.contents(atPath: $0) } == before, "the store changed")
        #expect(first.process.isRunning)
        let list = try first.run(["list", "--json"])
        #expect(list.exitCode == 0 && list.stdout.contains("\"seq\":1"), "\(list)")
    }

    @Test func aStoreReachedThroughALinkIsTheSameStore() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("countries.db")
        let first = try Service(in: sandbox, options: ["--db", db])
        defer { first.stop(signal: SIGKILL) }
        symlink(db, sandbox.file("link.db"))
        symlink(sandbox.path, sandbox.file("dir"))
        for other in [sandbox.file("link.db"), sandbox.file("dir") + "/countries.db"] {
            let second = try Countries.run(
                [
                    "serve", "--db", other, "--command", "ipc://" + sandbox.file("c2"), "--events",
                    "ipc://" + sandbox.file("e2"),
                ], timeout: .seconds(10))
            #expect(second.exitCode == 73, "\(other): \(second)")
            #expect(second.stderr.contains("pid \(first.process.pid)"), "\(other): \(second)")
        }
    }

    /// A hard link is a second name for the same file, which a lock named by path cannot see:
    /// before, `ln a.db b.db` and a serve on each ran two writers that both acknowledged seq 2,
    /// and a restart on a.db lost what b had acknowledged. A store with two names is refused.
    @Test func aStoreWithASecondHardLinkIsRefused() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("a.db")
        let first = try Service(in: sandbox, options: ["--db", db])
        defer { first.stop(signal: SIGKILL) }
        #expect(try first.run(["toggle", "France"]).exitCode == 0)
        let other = sandbox.file("b.db")
        #expect(link(db, other) == 0)
        func serve(_ store: String) throws -> Execution {
            try Countries.run(
                [
                    "serve", "--db", store, "--command", "ipc://" + sandbox.file("c2"), "--events",
                    "ipc://" + sandbox.file("e2"),
                ], timeout: .seconds(10))
        }
        let second = try serve(other)
        #expect(second.exitCode == 73, "\(second)")
        #expect(
            second.stderr.contains("2 names (hard links)") && second.stderr.contains("-samefile"), "\(second)"
        )
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("c2")), "it bound its endpoint")
        #expect(first.process.isRunning)
        first.stop(signal: SIGTERM)
        // Nor does either name start alone while both exist; with one name left, it serves.
        #expect(try serve(db).exitCode == 73)
        #expect(unlink(other) == 0)
        let alone = try Service(in: sandbox, options: ["--db", db])
        defer { alone.stop(signal: SIGKILL) }
        let list = try alone.run(["list", "--json"])
        #expect(list.stdout.contains("\"seq\":1"), "\(list)")
    }

    /// The lock file's text is cut away when it is taken: a `DB.lock` that is a second name of
    /// another file (or not a file) must be refused, not emptied through that name.
    @Test func aLockPathThatIsAnotherFilesLinkIsRefusedAndLeftWhole() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("a.db")
        let precious = sandbox.file("precious.txt")
        let text = Data("nothing here may be lost\n".utf8)
        try text.write(to: URL(fileURLWithPath: precious))
        #expect(link(precious, db + ".lock") == 0)
        let refused = try Countries.run(
            [
                "serve", "--db", db, "--command", "ipc://" + sandbox.file("c"), "--events",
                "ipc://" + sandbox.file("e"),
            ], timeout: .seconds(10))
        #expect(refused.exitCode != 0, "\(refused)")
        #expect(refused.stderr.contains("2 names (a hard link to another file?)"), "\(refused)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: precious)) == text, "the other file is whole")
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("c")), "it bound its endpoint")
    }

    @Test func servicesRacingForOneStoreLeaveExactlyOneWriter() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("countries.db")
        let racers = try (0..<4).map { index in
            try Countries.start([
                "serve", "--db", db, "--command", "ipc://" + sandbox.file("c\(index)"), "--events",
                "ipc://" + sandbox.file("e\(index)"),
            ])
        }
        defer { for racer in racers { racer.stop(signal: SIGKILL) } }
        // The losers exit at once; give them a bounded while.
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        while racers.filter(\.isRunning).count > 1 && ContinuousClock.now < deadline {
            usleep(20_000)
        }
        usleep(300_000)
        let running = racers.filter(\.isRunning)
        try #require(running.count == 1, "\(racers.map(\.stderrSoFar))")
        for loser in racers where !loser.isRunning {
            let ended = try loser.finish(timeout: .seconds(5))
            #expect(ended.exitCode == 73, "\(ended)")
            #expect(ended.stderr.contains("pid \(running[0].pid)"), "\(ended)")
        }
    }

    @Test func afterSIGKILLANewServiceTakesTheStoreAtOnce() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("countries.db")
        let first = try Service(in: sandbox, options: ["--db", db])
        defer { first.stop(signal: SIGKILL) }
        #expect(try first.run(["toggle", "France"]).exitCode == 0)
        first.stop(signal: SIGKILL)
        // The stale lock file is still there, naming a dead process; it must not matter.
        #expect(FileManager.default.fileExists(atPath: db + ".lock"))

        let killedAt = ContinuousClock.now
        let second = try Service(in: sandbox, options: ["--db", db])
        defer { second.stop(signal: SIGKILL) }
        let ready = ContinuousClock.now - killedAt
        #expect(ready < .seconds(5) * testSlowdown, "took \(ready)")
        let list = try second.run(["list", "--json"])
        #expect(list.exitCode == 0 && list.stdout.contains("\"seq\":1"), "\(list)")
        let holder = try String(contentsOfFile: db + ".lock", encoding: .utf8)
        #expect(holder.contains("pid \(second.process.pid)\n"), "\(holder)")

        // A clean stop removes the lock file.
        #expect(second.stop()?.exitCode == 0)
        #expect(!FileManager.default.fileExists(atPath: db + ".lock"))
    }

    @Test func theStoreAndItsFilesAreOwnerOnly() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("countries.db")
        let service = try Service(in: sandbox, options: ["--db", db])
        defer { service.stop(signal: SIGKILL) }
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        for file in [db, db + "-wal", db + "-shm", db + ".lock"] {
            #expect(Self.mode(of: file) == 0o600, "\(file): \(String(Self.mode(of: file) ?? 0, radix: 8))")
        }
    }

    @Test func anExistingStoreReadableByOthersIsTightenedAndLogged() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("countries.db")
        let first = try Service(in: sandbox, options: ["--db", db])
        #expect(try first.run(["toggle", "France"]).exitCode == 0)
        first.stop(signal: SIGKILL)  // keeps the -wal and -shm
        for file in [db, db + "-wal", db + "-shm"] { chmod(file, 0o644) }

        let second = try Service(in: sandbox, options: ["--db", db])
        defer { second.stop(signal: SIGKILL) }
        for file in [db, db + "-wal", db + "-shm"] {
            #expect(Self.mode(of: file) == 0o600, "\(file)")
            #expect(
                second.process.stderrSoFar.contains("\(file) was mode 0644"), "\(second.process.stderrSoFar)")
        }
        #expect(try second.run(["list", "--json"]).stdout.contains("\"seq\":1"))
    }

    @Test func inMemoryServicesTakeNoLock() throws {
        let sandbox = try Sandbox()
        let first = try Service(in: sandbox, options: ["--in-memory"])
        defer { first.stop(signal: SIGKILL) }
        let other = try Sandbox()
        let second = try Service(in: other, options: ["--in-memory"])
        defer { second.stop(signal: SIGKILL) }
        #expect(first.process.isRunning && second.process.isRunning)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.path)
        #expect(!leftovers.contains { $0.hasSuffix(".lock") }, "\(leftovers)")
    }

    /// Root ignores file modes, so the read-only directory is a read-only bind mount.
    @Test(.enabled(if: FaultEnvironment.canMount, "skipped: mounting needs root (CAP_SYS_ADMIN)"))
    func aReadOnlyDirectoryIsRefusedNamingTheLockFile() throws {
        let sandbox = try Sandbox()
        let directory = try FaultTemporaryDirectory()
        defer { directory.remove() }
        let view = try FaultReadOnlyView(of: directory.path)
        defer { view.remove() }
        let db = view.path + "/countries.db"
        let result = try Countries.run(
            ["serve", "--db", db, "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint],
            timeout: .seconds(10))
        #expect(result.exitCode == 74, "\(result)")
        #expect(
            result.stderr.contains(db) && result.stderr.contains("countries.db.lock: Read-only file system"),
            "\(result)")
        #expect(result.stderr.contains("make it writable, or pass another --db"), "\(result)")
    }

    // MARK: - The pid file

    @Test func servicesRacingForOnePidFileLeaveExactlyOne() throws {
        let sandbox = try Sandbox()
        let pidFile = sandbox.file("countries.pid")
        let racers = try (0..<4).map { index in
            try Countries.start([
                "serve", "--in-memory", "--pidfile", pidFile, "--command",
                "ipc://" + sandbox.file("c\(index)"),
                "--events", "ipc://" + sandbox.file("e\(index)"),
            ])
        }
        defer { for racer in racers { racer.stop(signal: SIGKILL) } }
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        while racers.filter(\.isRunning).count > 1 && ContinuousClock.now < deadline {
            usleep(20_000)
        }
        usleep(300_000)
        let running = racers.filter(\.isRunning)
        try #require(running.count == 1, "\(racers.map(\.stderrSoFar))")
        #expect(try String(contentsOfFile: pidFile, encoding: .utf8) == "\(running[0].pid)\n")
        for loser in racers where !loser.isRunning {
            let ended = try loser.finish(timeout: .seconds(5))
            #expect(ended.exitCode == 73, "\(ended)")
            #expect(ended.stderr.contains("held by process \(running[0].pid)"), "\(ended)")
        }
    }

    @Test func aStalePidFileIsTakenOverAndALiveProgramsIsNot() throws {
        let sandbox = try Sandbox()
        let pidFile = sandbox.file("countries.pid")
        // Another program's pid file, whose process runs (init): not ours to replace or remove.
        try "1\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        let refused = try Countries.run(
            [
                "serve", "--in-memory", "--pidfile", pidFile, "--command", sandbox.commandEndpoint,
                "--events",
                sandbox.eventsEndpoint,
            ], timeout: .seconds(10))
        #expect(refused.exitCode == 73, "\(refused)")
        #expect(refused.stderr.contains("names process 1, which is running"), "\(refused)")
        #expect(try String(contentsOfFile: pidFile, encoding: .utf8) == "1\n")

        // A pid file whose process is gone (above any pid_max) is taken over.
        try "2147483647\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        let service = try Service(in: sandbox, options: ["--in-memory", "--pidfile", pidFile])
        defer { service.stop(signal: SIGKILL) }
        #expect(try String(contentsOfFile: pidFile, encoding: .utf8) == "\(service.process.pid)\n")

        // So is the one a SIGKILL leaves: nothing holds its lock and its process is gone.
        service.stop(signal: SIGKILL)
        let next = try Service(in: sandbox, options: ["--in-memory", "--pidfile", pidFile])
        defer { next.stop(signal: SIGKILL) }
        #expect(try String(contentsOfFile: pidFile, encoding: .utf8) == "\(next.process.pid)\n")
    }

    @Test func aPidFileNeverTakesTheStoreOrAnotherFile() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("a.db")
        do {
            let service = try Service(in: sandbox, options: ["--db", db])
            defer { service.stop(signal: SIGKILL) }
            #expect(try service.run(["toggle", "France"]).exitCode == 0)
            #expect(service.stop(signal: SIGTERM)?.exitCode == 0)
        }
        let store = FileManager.default.contents(atPath: db)
        let names = try FileManager.default.contentsOfDirectory(atPath: sandbox.path).sorted()
        func serve(_ options: [String]) throws -> Execution {
            try Countries.run(
                ["serve"] + options + [
                    "--command", "ipc://" + sandbox.file("c2"), "--events", "ipc://" + sandbox.file("e2"),
                ], timeout: .seconds(10))
        }

        // The case: the same path as --db, refused before anything is opened.
        let same = try serve(["--db", db, "--pidfile", db])
        #expect(same.exitCode == 64, "\(same)")
        #expect(same.stderr.contains("--pidfile \(db) is one of the store's files"), "\(same)")
        // The store by another path, or another service's: refused by what it holds.
        let link = sandbox.file("link.pid")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: db)
        let other = sandbox.file("notes.txt")
        try "keep me\n".write(toFile: other, atomically: true, encoding: .utf8)
        for (pidFile, saying) in [
            (db, "does not hold just a process id (\(store?.count ?? 0) bytes"),
            (link, "is a symbolic link"), (other, "does not hold just a process id (8 bytes"),
            (sandbox.path, "is a directory"),
        ] {
            let refused = try serve(["--in-memory", "--pidfile", pidFile])
            #expect(refused.exitCode == 73, "\(refused)")
            #expect(refused.stderr.contains("--pidfile \(pidFile) \(saying)"), "\(refused)")
            #expect(refused.stderr.contains("nothing was changed"), "\(refused)")
        }
        #expect(FileManager.default.contents(atPath: db) == store, "the store changed")
        #expect(try String(contentsOfFile: other, encoding: .utf8) == "keep me\n")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: sandbox.path).sorted()
                == (names + ["link.pid", "notes.txt"]).sorted(),
            "a file was made or removed")

        // A pid file of its own is written, and removed at SIGTERM; the store serves as before.
        let pidFile = sandbox.file("a.pid")
        let service = try Service(in: sandbox, options: ["--db", db, "--pidfile", pidFile])
        defer { service.stop(signal: SIGKILL) }
        #expect(try String(contentsOfFile: pidFile, encoding: .utf8) == "\(service.process.pid)\n")
        let list = try service.run(["list", "--json"])
        #expect(list.exitCode == 0 && list.stdout.contains("\"seq\":1"), "\(list)")
        #expect(service.stop(signal: SIGTERM)?.exitCode == 0)
        #expect(!FileManager.default.fileExists(atPath: pidFile))
        #expect(FileManager.default.fileExists(atPath: db))
    }

    @Test func aRefusedStoreLeavesThePidFileAlone() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("countries.db")
        let first = try Service(in: sandbox, options: ["--db", db])
        defer { first.stop(signal: SIGKILL) }
        let pidFile = sandbox.file("second.pid")
        let second = try Countries.run(
            [
                "serve", "--db", db, "--pidfile", pidFile, "--command", "ipc://" + sandbox.file("c2"),
                "--events", "ipc://" + sandbox.file("e2"),
            ], timeout: .seconds(10))
        #expect(second.exitCode == 73, "\(second)")
        #expect(!FileManager.default.fileExists(atPath: pidFile))
    }

    static func mode(of path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o777
    }
}
