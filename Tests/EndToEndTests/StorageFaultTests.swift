import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// The store cannot be used: at start the service says what is wrong with which file and exits
/// 74; during a run it answers `storage_error`, publishes nothing, keeps its state equal to the
/// disk's and recovers when the fault is gone. No acknowledged change is ever lost.
@Suite(.serialized, .hangGuard())
struct StorageFaultTests {
    // MARK: - At start

    @Test func garbageFileIsRefusedAtStartAndLeftAlone() throws {
        let directory = try FaultTemporaryDirectory()
        defer { directory.remove() }
        let db = directory.path + "/countries.db"
        let garbage = Data((0..<16_384).map { _ in UInt8.random(in: 0...255) })
        try garbage.write(to: URL(fileURLWithPath: db))

        let result = try Self.serve(db: db, sockets: directory.path)
        #expect(result.status == 74, "\(result)")
        #expect(result.stderr.contains(db), "the message does not name the file: \(result.stderr)")
        #expect(result.stderr.contains("move it aside or pass another --db"), "\(result.stderr)")
        #expect(FileManager.default.contents(atPath: db) == garbage, "the file was changed")
    }

    @Test func damagedStoreIsRefusedAtStart() throws {
        let directory = try FaultTemporaryDirectory()
        defer { directory.remove() }
        let db = directory.path + "/countries.db"
        try Self.makeStore(db: db, sockets: directory.path)
        // Keep page 1 (the header and the schema), overwrite every other page with garbage.
        let handle = try #require(FileHandle(forUpdatingAtPath: db))
        let size = try handle.seekToEnd()
        try #require(size > 4096, "the store is a single page")
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data((4096..<size).map { _ in UInt8.random(in: 0...255) }))
        try handle.close()

        let result = try Self.serve(db: db, sockets: directory.path)
        #expect(result.status == 74, "\(result)")
        #expect(result.stderr.contains(db), "\(result.stderr)")
        #expect(result.stderr.contains("damaged"), "\(result.stderr)")
    }

    @Test func missingDirectoryIsRefusedAtStart() throws {
        let directory = try FaultTemporaryDirectory()
        defer { directory.remove() }
        let db = directory.path + "/no/such/directory/countries.db"

        let result = try Self.serve(db: db, sockets: directory.path)
        #expect(result.status == 74, "\(result)")
        #expect(result.stderr.contains(db), "\(result.stderr)")
        #expect(result.stderr.contains("does not exist; create it or pass another --db"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/no"))
    }

    /// Root ignores file modes, so read-only here is a read-only bind mount of the directory.
    @Test(.enabled(if: FaultEnvironment.canMount, "skipped: mounting needs root (CAP_SYS_ADMIN)"))
    func storeOnReadOnlyMountIsRefusedAtStart() throws {
        let directory = try FaultTemporaryDirectory()
        defer { directory.remove() }
        let storeDirectory = directory.path + "/store"
        mkdir(storeDirectory, 0o700)
        try Self.makeStore(db: storeDirectory + "/countries.db", sockets: directory.path)
        let view = try FaultReadOnlyView(of: storeDirectory)
        defer { view.remove() }
        let db = view.path + "/countries.db"

        let result = try Self.serve(db: db, sockets: directory.path)
        #expect(result.status == 74, "\(result)")
        #expect(result.stderr.contains(db), "\(result.stderr)")
        #expect(result.stderr.contains("writable"), "\(result.stderr)")
    }

    /// The other way to make a file read-only for root: the immutable attribute.
    @Test(.enabled(if: FaultEnvironment.canMakeImmutable, "skipped: chattr +i does not work here"))
    func immutableStoreIsRefusedAtStart() throws {
        let directory = try FaultTemporaryDirectory()
        defer { directory.remove() }
        let db = directory.path + "/countries.db"
        try Self.makeStore(db: db, sockets: directory.path)
        try FaultCommand.check("/usr/bin/chattr", ["+i", db])
        defer { _ = try? FaultCommand.run("/usr/bin/chattr", ["-i", db]) }

        let result = try Self.serve(db: db, sockets: directory.path)
        #expect(result.status == 74, "\(result)")
        #expect(result.stderr.contains(db), "\(result.stderr)")
        #expect(result.stderr.contains("writable"), "\(result.stderr)")
    }

    @Test(.enabled(if: FaultEnvironment.canMount, "skipped: mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
    func fullDiskIsRefusedAtStartAndANewStoreWorksOnceFreed() throws {
        let sockets = try FaultTemporaryDirectory()
        defer { sockets.remove() }
        let disk = try FaultTmpfs(kilobytes: 300)
        defer { disk.remove() }
        let db = disk.path + "/countries.db"
        disk.fill()

        let result = try Self.serve(db: db, sockets: sockets.path)
        #expect(result.status == 74, "\(result)")
        #expect(result.stderr.contains(db), "\(result.stderr)")
        #expect(result.stderr.contains("free some disk space"), "\(result.stderr)")

        disk.free()
        let service = try FaultService(db: db, socketDirectory: sockets.path)
        defer { service.process.stop() }
        let list = try service.list()
        #expect(list.seq == 0 && list.rows.count == 8, "\(list)")
    }

    // MARK: - During a run

    @Test(.enabled(if: FaultEnvironment.canMount, "skipped: mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
    func fullDiskDuringARunRefusesChangesPublishesNothingAndRecovers() throws {
        let sockets = try FaultTemporaryDirectory()
        defer { sockets.remove() }
        let disk = try FaultTmpfs(kilobytes: 1024)
        defer { disk.remove() }
        let db = disk.path + "/countries.db"

        var service = try FaultService(db: db, socketDirectory: sockets.path)
        defer { service.process.stop() }
        let subscriber = try FaultProcess.countries([
            "events", "--json", "--command", service.command, "--events", service.events,
        ])
        defer { subscriber.stop() }
        // Live: it prints every change after the list it started from.
        try #require(
            subscriber.stderr.waitFor(timeout: .seconds(10)) { $0.contains("live at seq") } != nil,
            "\(subscriber.stderr.text)")

        // Three acknowledged toggles, then the disk fills.
        var acknowledged: [UInt64] = []
        for index in 0..<3 {
            let result = try service.client(["toggle", "\(index)"])
            try #require(result.status == 0, "\(result)")
            acknowledged.append(try #require(faultSeq(result.stdout)))
        }
        let beforeFault = try service.list()
        #expect(beforeFault.seq == 3)
        let filled = disk.fill()
        #expect(filled > 0)

        // Every change is refused with storage_error; reads still work.
        var refusals: [String] = []
        for index in 3..<8 {
            let started = ContinuousClock.now
            let result = try service.client(["toggle", "\(index)", "--retries", "1"])
            #expect(result.status == 1, "\(result)")
            #expect(faultErrorCode(result.stdout) == "storage_error", "\(result)")
            refusals.append("\(faultMilliseconds(ContinuousClock.now - started)) ms")
        }
        let add = try service.client(["add", "Portugal", "--retries", "1"])
        #expect(faultErrorCode(add.stdout) == "storage_error", "\(add)")
        #expect(add.stdout.contains("full"), "the refusal does not say the disk is full: \(add.stdout)")
        #expect(try service.list() == beforeFault, "the service's state moved while nothing was committed")
        let status = try service.client(["status"])
        #expect(status.status == 0, "\(status)")

        // Nothing was published for the refused changes.
        Thread.sleep(forTimeInterval: 0.5)
        let published = Self.publishedSeqs(subscriber)
        #expect(published.allSatisfy { $0 <= 3 }, "published while the disk was full: \(published)")

        // Killed while full, restarted: the disk holds what the service held.
        service.process.signal(SIGKILL)
        _ = service.process.wait(timeout: .seconds(5))
        service = try FaultService(db: db, socketDirectory: sockets.path)
        let restartWhileFull = service.process.isRunning ? "served the same list" : "exited at start"
        if service.process.isRunning {
            #expect(try service.list() == beforeFault, "the disk differs from what the service held")
        } else {
            // Starting on a full disk may fail, but only with a clear message and 74.
            let status = service.process.wait(timeout: .seconds(5))
            #expect(status == 74, "\(service.process.stderr.text)")
        }

        // Space is back: the very next toggle succeeds and is published.
        disk.free()
        if !service.process.isRunning { service = try FaultService(db: db, socketDirectory: sockets.path) }
        let subscriberAfter = try FaultProcess.countries([
            "events", "--json", "--command", service.command, "--events", service.events,
        ])
        defer { subscriberAfter.stop() }
        // Live: it prints every change after the list it started from.
        try #require(
            subscriberAfter.stderr.waitFor(timeout: .seconds(10)) { $0.contains("live at seq") } != nil,
            "\(subscriberAfter.stderr.text)")
        let recovered = try service.client(["toggle", "3", "--retries", "1"])
        #expect(recovered.status == 0, "\(recovered)")
        #expect(faultSeq(recovered.stdout) == 4)
        acknowledged.append(try #require(faultSeq(recovered.stdout)))
        #expect(
            subscriberAfter.stdout.waitFor(timeout: .seconds(5)) { $0.contains("\"seq\":4") } != nil,
            "the recovered toggle was not published: \(subscriberAfter.stdout.text)")

        // Nothing acknowledged was lost: kill, restart, compare with what the replies imply.
        let expected = try service.list()
        service.process.signal(SIGKILL)
        _ = service.process.wait(timeout: .seconds(5))
        service = try FaultService(db: db, socketDirectory: sockets.path)
        let afterRestart = try service.list()
        #expect(afterRestart == expected)
        #expect(afterRestart.seq == acknowledged.last)
        #expect(
            afterRestart.rows.filter(\.visited).map(\.name).sorted()
                == ["France", "United Kingdom", "Italy"].sorted(),
            "\(afterRestart)")
        print(
            """
            storage fault: disk full after \(filled) filler bytes; storage_error replies took \(refusals); \
            restarted while full: \(restartWhileFull); refusal: \(faultReply(add.stdout)?["error"] ?? "none")
            """)
    }

    /// Root ignores modes, so "the store stops being writable" is the immutable attribute on
    /// its write-ahead log: writes through the open descriptor fail with EPERM (SQLITE_IOERR).
    @Test(.enabled(if: FaultEnvironment.canMakeImmutable, "skipped: chattr +i does not work here"))
    func unwritableStoreDuringARunRefusesChangesAndRecovers() throws {
        let directory = try FaultTemporaryDirectory()
        defer { directory.remove() }
        let db = directory.path + "/countries.db"
        var service = try FaultService(db: db, socketDirectory: directory.path)
        defer { service.process.stop() }
        let subscriber = try FaultProcess.countries([
            "events", "--json", "--command", service.command, "--events", service.events,
        ])
        defer { subscriber.stop() }
        // Live: it prints every change after the list it started from.
        try #require(
            subscriber.stderr.waitFor(timeout: .seconds(10)) { $0.contains("live at seq") } != nil,
            "\(subscriber.stderr.text)")
        let first = try service.client(["toggle", "France"])
        try #require(first.status == 0, "\(first)")
        let beforeFault = try service.list()

        let wal = db + "-wal"
        try FaultCommand.check("/usr/bin/chattr", ["+i", wal])
        var immutable = true
        defer { if immutable { _ = try? FaultCommand.run("/usr/bin/chattr", ["-i", wal]) } }
        for target in ["Spain", "Italy", "France"] {
            let result = try service.client(["toggle", target, "--retries", "1"])
            #expect(result.status == 1, "\(result)")
            #expect(faultErrorCode(result.stdout) == "storage_error", "\(result)")
        }
        #expect(try service.list() == beforeFault)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(Self.publishedSeqs(subscriber).allSatisfy { $0 <= beforeFault.seq })

        try FaultCommand.check("/usr/bin/chattr", ["-i", wal])
        immutable = false
        let recovered = try service.client(["toggle", "Spain", "--retries", "1"])
        #expect(recovered.status == 0, "\(recovered)")
        #expect(faultSeq(recovered.stdout) == beforeFault.seq + 1)
        #expect(
            subscriber.stdout.waitFor(timeout: .seconds(5)) { $0.contains("\"seq\":\(beforeFault.seq + 1)") }
                != nil,
            "the recovered toggle was not published: \(subscriber.stdout.text)")

        let expected = try service.list()
        service.process.signal(SIGKILL)
        _ = service.process.wait(timeout: .seconds(5))
        service = try FaultService(db: db, socketDirectory: directory.path)
        #expect(try service.list() == expected)
        #expect(expected.rows.filter(\.visited).map(\.name).sorted() == ["France", "Spain", "United States"])
    }

    // MARK: - Helpers

    /// `countries serve` on `db` that must exit at start; killed (and the test failed) if it
    /// serves.
    static func serve(db: String, sockets: String) throws -> FaultCommand.Result {
        try FaultCommand.countries(
            [
                "serve", "--db", db, "--command", "ipc://\(sockets)/command", "--events",
                "ipc://\(sockets)/events",
            ],
            timeout: .seconds(15))
    }

    /// A store at `db` with one toggle in it, written by a service that then stops cleanly.
    static func makeStore(db: String, sockets: String) throws {
        let service = try FaultService(db: db, socketDirectory: sockets)
        defer { service.process.stop() }
        let toggle = try service.client(["toggle", "France"])
        try #require(toggle.status == 0, "\(toggle)")
        let status = service.process.stop()
        try #require(status == 0, "the service did not stop cleanly: \(service.process.stderr.text)")
    }

    /// The seqs of the events a `countries events --json` process printed.
    static func publishedSeqs(_ subscriber: FaultProcess) -> [UInt64] {
        subscriber.stdout.lines.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any]
            else { return nil }
            return (object["seq"] as? NSNumber)?.uint64Value
        }
    }
}
