import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// `countries backup` on the built binary (README, "Backup and restore"): a consistent, private
/// copy of a store that is being written, which serves the same list as a new store.
@Suite("Backup end to end", .serialized)
struct BackupEndToEndTests {
    typealias Support = SubscriberEndToEndTests

    /// The files in `directory` whose names start with a dot: a backup's temporary files.
    private static func hiddenFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".") }
    }

    @Test("a backup taken while a writer toggles is one state, private, and serves as a new store")
    func backupWhileWritingRestoresAsANewStore() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        var service = try sandbox.startService()
        let original = try #require(Support.serviceList(sandbox))
        // A writer that toggles France without pause: at seq N, France is visited when N is odd.
        let writer = try ChildProcess(
            "/bin/sh",
            ["-c", "while :; do \"$0\" toggle France >/dev/null || exit 1; done", CountriesBinary.path],
            environment: sandbox.environment, newProcessGroup: true)
        defer { writer.crash() }
        #expect(eventually(within: .seconds(10)) { (Support.serviceList(sandbox)?["seq"] as? Int ?? 0) >= 5 })
        let copy = sandbox.directory + "/backup.db"
        let backup = sandbox.run(["backup", "--db", sandbox.database, copy])
        #expect(backup.status == 0, "\(backup.error)")
        let after = try #require(Support.serviceList(sandbox)?["seq"] as? Int)
        writer.crash()
        #expect(writer.exitStatus != 1, "the writer's toggles failed during the backup")
        let printed = backup.output.split(separator: " ").map(String.init)
        let seqIndex = try #require(printed.firstIndex(of: "seq"))
        let seq = try #require(Int(printed[seqIndex + 1].trimmingCharacters(in: .punctuationCharacters)))
        #expect(seq >= 5 && seq <= after, "\(backup.output)")
        #expect(ScratchDirectory.mode(of: copy) == 0o600)
        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"))
        #expect(Self.hiddenFiles(sandbox.directory).isEmpty, "\(Self.hiddenFiles(sandbox.directory))")

        // The README's round trip: stop, put the copy in place of the store, start.
        #expect(service.stop())
        for suffix in ["", "-wal", "-shm"] { unlink(sandbox.database + suffix) }
        #expect(rename(copy, sandbox.database) == 0)
        service = try sandbox.startService()
        let restored = try #require(Support.serviceList(sandbox))
        #expect(restored["seq"] as? Int == seq)
        #expect(restored["store"] as? String != original["store"] as? String)
        let expected = NSMutableDictionary(dictionary: original as? [AnyHashable: Any] ?? [:])
        expected["seq"] = seq
        expected["store"] = restored["store"]
        var countries = try #require(original["countries"] as? [[String: Any]])
        let france = try #require(countries.firstIndex { $0["name"] as? String == "France" })
        countries[france]["visited"] = seq % 2 == 1
        expected["countries"] = countries
        #expect(restored == expected, "the copy is not the state at seq \(seq)")
        #expect(
            eventually(within: .seconds(5)) {
                service.standardError.text.contains("made by `countries backup`")
            },
            "\(service.standardError.text)")
        #expect(sandbox.run(["toggle", "Italy"]).status == 0)
        #expect(Support.serviceList(sandbox)?["seq"] as? Int == seq + 1)
    }

    @Test("backup writes only a new file, or with --force a regular one that is not the store")
    func backupRefusesLinksExistingFilesAndTheStore() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        #expect(sandbox.run(["toggle", "France"]).status == 0)
        let directory = sandbox.directory

        let elsewhere = directory + "/elsewhere"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: elsewhere))
        #expect(symlink(elsewhere, directory + "/link.db") == 0)
        for force in [[], ["--force"]] {
            let linked = sandbox.run(["backup", "--db", sandbox.database] + force + [directory + "/link.db"])
            #expect(linked.status == 1)
            #expect(linked.error.contains("symbolic link"), "\(linked.error)")
        }
        #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "keep")

        let existing = sandbox.run(["backup", "--db", sandbox.database, elsewhere])
        #expect(existing.status == 1)
        #expect(existing.error.contains("already exists; pass --force"), "\(existing.error)")
        #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "keep")
        chmod(elsewhere, 0o644)
        let forced = sandbox.run(["backup", "--db", sandbox.database, "--force", elsewhere])
        #expect(forced.status == 0, "\(forced.error)")
        #expect(forced.output.contains("at seq 1"), "\(forced.output)")
        #expect(ScratchDirectory.mode(of: elsewhere) == 0o600)

        let itself = sandbox.run(["backup", "--db", sandbox.database, "--force", sandbox.database])
        #expect(itself.status == 1)
        #expect(itself.error.contains("the store itself"), "\(itself.error)")
        let missing = sandbox.run(["backup", "--db", directory + "/nothing.db", directory + "/b.db"])
        #expect(missing.status == 66)
        #expect(missing.error.contains("there is no store at"), "\(missing.error)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/b.db"))
        // A directory that is not there is named, not the temporary file made in it.
        let nowhere = sandbox.run(["backup", "--db", sandbox.database, directory + "/nodir/b.db"])
        #expect(nowhere.status == 73)
        #expect(
            nowhere.error.contains(
                "cannot create a file in \(directory)/nodir: No such file or directory; check the directory of \(directory)/nodir/b.db"
            ), "\(nowhere.error)")
        #expect(Self.hiddenFiles(directory).isEmpty, "\(Self.hiddenFiles(directory))")
        #expect(Support.serviceList(sandbox)?["seq"] as? Int == 1)
    }
}
