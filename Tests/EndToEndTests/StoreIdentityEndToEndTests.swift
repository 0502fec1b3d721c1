import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// Store identity and positions that outlive a process, on the built binary (docs/PROTOCOL.md,
/// "Store identity"; README, on-change `--cursor`): a view or a runner never takes one store's
/// seqs for another's, and a restarted runner skips nothing.
@Suite("Store identity end to end", .serialized)
struct StoreIdentityEndToEndTests {
    typealias Support = SubscriberEndToEndTests

    private static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("a watcher stopped across a restart on a new store at the same seq ends on the new store")
    func watcherFollowsANewStoreAtTheSameSeq() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        var service = try sandbox.startService(inMemory: true)
        for _ in 0..<3 { #expect(sandbox.run(["toggle", "France"]).status == 0) }
        let watcher = try sandbox.launch(["watch", "--json", "--heartbeat-ms", "100"])
        #expect(
            eventually(within: .seconds(5)) {
                Support.parseObject(watcher.standardOutput.textLines.last { !$0.isEmpty } ?? "")?["seq"]
                    as? Int
                    == 3
            })
        defer { watcher.child.signal(SIGCONT) }
        try #require(watcher.child.pause(), "the watcher did not stop: \(threadStates(of: watcher.pid))")
        #expect(service.stop())
        service = try sandbox.startService(inMemory: true)
        for _ in 0..<5 { #expect(sandbox.run(["toggle", "Italy"]).status == 0) }
        let expected = try #require(Support.serviceList(sandbox))
        #expect(expected["seq"] as? Int == 5)
        watcher.child.signal(SIGCONT)
        var last: NSDictionary?
        let converged = eventually(within: .seconds(5)) {
            last = Support.parseObject(watcher.standardOutput.textLines.last { !$0.isEmpty } ?? "").map {
                $0 as NSDictionary
            }
            return last == expected
        }
        #expect(converged, "the watcher shows \(String(describing: last)), the service \(expected)")
        #expect(
            eventually(within: .seconds(5)) { watcher.standardError.text.contains("another store") },
            "\(watcher.standardError.text)")
        _ = service
    }

    @Test("events says when the store changed and prints the new store's events from its first")
    func eventsFollowsANewStore() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        var service = try sandbox.startService(inMemory: true)
        let events = try sandbox.launch(["events", "--heartbeat-ms", "100"])
        #expect(eventually(within: .seconds(5)) { events.standardError.text.contains("live at seq 0") })
        for _ in 0..<3 { #expect(sandbox.run(["toggle", "France"]).status == 0) }
        #expect(
            eventually(within: .seconds(5)) {
                events.standardOutput.textLines.filter { !$0.isEmpty }.count == 3
            })
        #expect(service.stop())
        service = try sandbox.startService(inMemory: true)
        #expect(
            eventually(within: .seconds(5)) { events.standardError.text.contains("another store") },
            "\(events.standardError.text)")
        #expect(eventually(within: .seconds(5)) { events.standardError.text.hasSuffix("live at seq 0\n") })
        for _ in 0..<3 { #expect(sandbox.run(["toggle", "Italy"]).status == 0) }
        #expect(
            eventually(within: .seconds(5)) {
                events.standardOutput.textLines.filter { !$0.isEmpty }.count == 6
            })
        let printed = events.standardOutput.textLines.filter { !$0.isEmpty }
        #expect(
            printed.map { $0.split(separator: " ").first.map(String.init) ?? "" } == [
                "1", "2", "3", "1", "2", "3",
            ])
        #expect(printed.suffix(3).allSatisfy { $0.contains("Italy") }, "\(printed)")
        _ = service
    }

    @Test("on-change --cursor runs for the changes made while it was down, once each, in order")
    func onChangeCursorCatchesUp() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let log = "\(sandbox.directory)/runs.log"
        let cursor = "\(sandbox.directory)/cursor.json"
        let script = "\(sandbox.directory)/record.sh"
        try """
        #!/bin/sh
        echo "$COUNTRIES_SEQ $COUNTRIES_EVENT $COUNTRY_NAME" >> "$1"
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let arguments = [
            "on-change", "--cursor", cursor, "--heartbeat-ms", "100", "--", "/bin/sh", script, log,
        ]

        var runner = try sandbox.launch(arguments)
        #expect(eventually(within: .seconds(5)) { runner.standardError.text.contains("live at seq 0") })
        #expect(sandbox.run(["toggle", "France"]).status == 0)
        #expect(eventually(within: .seconds(5)) { Self.lines(log) == ["1 changed France"] })
        #expect(eventually(within: .seconds(5)) { Self.lines(cursor).first?.contains("\"seq\":1") == true })
        runner.signal(SIGKILL)
        for name in ["Italy", "Spain"] { #expect(sandbox.run(["toggle", name]).status == 0) }

        runner = try sandbox.launch(arguments)
        #expect(
            eventually(within: .seconds(5)) { Self.lines(log).count == 3 },
            "\(Self.lines(log)) \(runner.standardError.text)")
        #expect(sandbox.run(["toggle", "Moldova"]).status == 0)
        #expect(eventually(within: .seconds(5)) { Self.lines(cursor).first?.contains("\"seq\":4") == true })
        #expect(
            Self.lines(log) == [
                "1 changed France", "2 changed Italy", "3 changed Spain", "4 changed Moldova",
            ])
        let saved = Support.parseObject(Self.lines(cursor).first ?? "")
        #expect(saved?["seq"] as? Int == 4)
        #expect((saved?["store"] as? String)?.count == 32)
        var mode = stat()
        #expect(stat(cursor, &mode) == 0 && mode.st_mode & 0o077 == 0, "the cursor file is private")
        #expect(runner.stop())
    }

    @Test("on-change --cursor on another store runs once as a reset and says so")
    func onChangeCursorOnAnotherStore() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService(inMemory: true)
        let log = "\(sandbox.directory)/runs.log"
        let cursor = "\(sandbox.directory)/cursor.json"
        // A position in a store that is not the service's, at a seq the service also has.
        try #"{"seq":0,"store":"0123456789abcdef0123456789abcdef"}"#.write(
            toFile: cursor, atomically: true, encoding: .utf8)
        let runner = try sandbox.launch([
            "on-change", "--cursor", cursor, "--heartbeat-ms", "100", "--", "/bin/sh", "-c",
            #"echo "$COUNTRIES_SEQ $COUNTRIES_EVENT" >> "$0""#, log,
        ])
        #expect(eventually(within: .seconds(5)) { Self.lines(log) == ["0 reset"] }, "\(Self.lines(log))")
        // stderr is read on its own thread: wait for it rather than race it.
        #expect(
            eventually(within: .seconds(5)) { runner.standardError.text.contains("another store") },
            "\(runner.standardError.text)")
        #expect(runner.stop())
    }

    @Test("reads and status name the store; a change with if_store naming another store is a conflict")
    func ifStoreConflicts() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let list = try #require(Support.parseObject(sandbox.run(["list", "--json"]).output))
        let store = try #require(list["store"] as? String)
        #expect(store.count == 32)
        let status = try #require(Support.parseObject(sandbox.run(["status", "--json"]).output))
        #expect(status["store"] as? String == store)
        #expect(status["store_path"] as? String == sandbox.database)

        let other = "0123456789abcdef0123456789abcdef"
        let refused = sandbox.run(["toggle", "France", "--if-store", other])
        #expect(refused.status == 1)
        #expect(
            refused.error.contains("another store") || refused.error.contains("different store"),
            "\(refused.error)")
        #expect(sandbox.run(["toggle", "France", "--if-store", store, "--if-seq", "0"]).status == 0)
        #expect(sandbox.run(["get", "France", "--json"]).output.contains("\"visited\":true"))
    }
}
