import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// A store's files changed under a running service (docs/RELIABILITY.md, "A store moved under
/// the service"), and a disk its own write-ahead log filled: nothing acknowledged is lost, and
/// no change is acknowledged that a restart would not find.
@Suite(.serialized, .hangGuard())
struct StoreFileFaultTests {
    /// The service on a store in `directory`, two toggles acknowledged, and the list they left.
    private func serviceWithTwoToggles(in directory: FaultTemporaryDirectory) throws -> (
        FaultService, FaultList
    ) {
        let service = try FaultService(db: directory.file("countries.db"), socketDirectory: directory.path)
        for index in 0..<2 {
            let result = try service.client(["toggle", "\(index)"])
            try #require(result.status == 0, "\(result)")
        }
        let list = try service.list()
        #expect(list.seq == 2)
        return (service, list)
    }

    /// What a restart on the store finds: `acknowledged`, the list at seq 2.
    private func expectKept(_ acknowledged: FaultList, in directory: FaultTemporaryDirectory) throws {
        let restarted = try FaultService(db: directory.file("countries.db"), socketDirectory: directory.path)
        defer { restarted.process.stop() }
        #expect(try restarted.list() == acknowledged)
    }

    @Test func aStoreRenamedUnderTheServiceStopsItAndNothingAcknowledgedIsLost() throws {
        let directory = try FaultTemporaryDirectory(prefix: "store-renamed")
        defer { directory.remove() }
        let (service, acknowledged) = try serviceWithTwoToggles(in: directory)
        defer { service.process.stop() }

        #expect(rename(directory.file("countries.db"), directory.file("moved.db")) == 0)
        // Refused, or unanswered when the service's own check stopped it first: never acknowledged.
        let toggle = try service.client(["toggle", "2", "--retries", "1", "--timeout", "2000"])
        #expect(toggle.status != 0, "a change was acknowledged on a store that moved: \(toggle)")
        #expect(service.process.wait(timeout: .seconds(10)) == 74, "\(service.process.stderr.text)")
        #expect(service.process.stderr.text.contains("was moved, replaced or deleted while the service ran"))

        // Put back beside its log, as the message says, the store holds every acknowledged change.
        #expect(rename(directory.file("moved.db"), directory.file("countries.db")) == 0)
        try expectKept(acknowledged, in: directory)
    }

    @Test func aLogDeletedUnderTheServiceIsCopiedIntoTheStoreAndStopsIt() throws {
        let directory = try FaultTemporaryDirectory(prefix: "wal-deleted")
        defer { directory.remove() }
        let (service, acknowledged) = try serviceWithTwoToggles(in: directory)
        defer { service.process.stop() }

        #expect(unlink(directory.file("countries.db-wal")) == 0)
        // No request needed: the service looks at each heartbeat.
        #expect(service.process.wait(timeout: .seconds(10)) == 74, "\(service.process.stderr.text)")
        #expect(service.process.stderr.text.contains("were copied into"), "\(service.process.stderr.text)")
        try expectKept(acknowledged, in: directory)
    }

    /// An unwritable `-shm` left by a killed service: SQLite calls the database read-only, and
    /// the refusal named only the database and its directory, both writable.
    @Test(.enabled(if: FaultEnvironment.canMakeImmutable, "skipped: chattr +i does not work here"))
    func anUnwritableIndexAtStartIsNamed() throws {
        let directory = try FaultTemporaryDirectory(prefix: "shm-immutable")
        defer { directory.remove() }
        let (service, _) = try serviceWithTwoToggles(in: directory)
        service.process.signal(SIGKILL)
        _ = service.process.wait(timeout: .seconds(5))
        let index = directory.file("countries.db-shm")
        try FaultCommand.check("/usr/bin/chattr", ["+i", index])
        defer { _ = try? FaultCommand.run("/usr/bin/chattr", ["-i", index]) }

        let restarted = try FaultService(db: directory.file("countries.db"), socketDirectory: directory.path)
        defer { restarted.process.stop() }
        #expect(restarted.process.wait(timeout: .seconds(10)) == 74, "\(restarted.process.stderr.text)")
        #expect(restarted.process.stderr.text.contains(index), "\(restarted.process.stderr.text)")
    }

    /// A store put back by root (a backup restored by hand) for a service that runs as its own
    /// user: the directory is the user's, the file is root's. SQLite says only that it cannot
    /// open the file, and the advice blamed the directory.
    @Test(
        .enabled(
            if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser"),
            "skipped: needs root and runuser"))
    func aStoreAnotherUserOwnsIsNamedWithItsOwner() throws {
        let directory = try FaultTemporaryDirectory(prefix: "store-owner")
        defer { directory.remove() }
        let (service, _) = try serviceWithTwoToggles(in: directory)
        service.process.stop()
        // The service's user: `nobody`, with a copy of the binary it can reach.
        let binary = directory.file("countries")
        try FileManager.default.copyItem(atPath: CountriesBinary.path, toPath: binary)
        #expect(chmod(directory.path, 0o755) == 0 && chown(directory.path, 65534, 65534) == 0)
        for file in ["countries.db-wal", "countries.db-shm", "countries.db.lock"] {
            unlink(directory.file(file))
        }
        let run = try FaultCommand.run(
            "/usr/sbin/runuser",
            [
                "-u", "nobody", "--", binary, "serve", "--db", directory.file("countries.db"), "--command",
                "ipc://\(directory.file("c"))", "--events", "ipc://\(directory.file("e"))",
            ])
        #expect(run.status == 74, "\(run)")
        #expect(
            run.stderr.contains(
                "\(directory.file("countries.db")) belongs to uid 0, mode 0600, which this process (uid 65534) cannot read and write: give it to the service's user (chown)"
            ), "\(run)")
    }

    /// SQLite checkpoints every 1,000 pages; before, 376 KiB freed after the log filled a disk
    /// took about 45 commits and refused the rest.
    @Test(.enabled(if: FaultEnvironment.canMount, "skipped: mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
    func spaceFreedAfterTheLogFilledTheDiskServesEveryLaterChange() throws {
        let sockets = try FaultTemporaryDirectory(prefix: "wal-full")
        defer { sockets.remove() }
        let disk = try FaultTmpfs(kilobytes: 1024)
        defer { disk.remove() }
        let service = try FaultService(db: disk.path + "/countries.db", socketDirectory: sockets.path)
        defer { service.process.stop() }

        var acknowledged = 0
        var refusal: FaultCommand.Result?
        for round in 0..<600 where refusal == nil {
            let result = try service.client(["toggle", "\(round % 8)", "--retries", "1"])
            if result.status == 0 {
                acknowledged += 1
            } else {
                refusal = result
            }
        }
        let refused = try #require(refusal, "the log never filled the disk")
        #expect(faultErrorCode(refused.stdout) == "storage_error", "\(refused)")

        try FaultCommand.check("/bin/mount", ["-o", "remount,size=1400k", disk.path])
        var failures: [String] = []
        for round in 0..<100 {
            let result = try service.client(["toggle", "\(round % 8)", "--retries", "1"])
            if result.status != 0 { failures.append("toggle \(round): \(result.stdout)") }
        }
        #expect(
            failures.isEmpty,
            "\(failures.count) of 100 refused after space was freed, first \(failures.first ?? "")")
        print(
            "log filled a 1 MiB disk after \(acknowledged) toggles; \(100 - failures.count) of 100 served after 376 KiB freed"
        )
    }
}
