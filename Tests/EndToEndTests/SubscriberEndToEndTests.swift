import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// `watch`, `select` and `on-change` as a person and a script use them: the built binary, real
/// terminals (tmux), a real service on ipc:// endpoints in a temp dir, a 100 ms heartbeat.
@Suite("Subscribers end to end", .serialized, .enabled(if: SubscriberTmux.isAvailable, "needs tmux"))
struct SubscriberEndToEndTests {
    static let seedNames = [
        "United States", "United Kingdom", "France", "Italy", "Spain", "Russia", "Moldova", "Romania",
    ]

    /// The service's `list --json`, as the list itself (`countries` and `seq`, no `ok`).
    static func serviceList(_ sandbox: SubscriberSandbox) -> NSDictionary? {
        let result = sandbox.run(["list", "--json"])
        guard result.status == 0, var list = parseObject(result.output) else { return nil }
        list["ok"] = nil
        return list as NSDictionary
    }

    static func parseObject(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    @Test("watch shows a toggle within a second; q quits and gives the terminal back")
    func watchShowsToggleAndQuits() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let pane = try sandbox.tmux(
            """
            echo before watch; S=$(stty -g); \(CountriesBinary.path) watch --heartbeat-ms 100; \
            echo "watch exited $?"; [ "$(stty -g)" = "$S" ] && echo "terminal restored"; sleep 60
            """)
        let (live, screen) = pane.waitForScreen { $0.contains("live · seq 0") && $0.contains("France") }
        #expect(live, "\(screen)")
        #expect(!screen.contains("✓ France"))

        #expect(sandbox.run(["toggle", "France"]).status == 0)
        let (shown, after) = pane.waitForScreen(upTo: .seconds(1)) {
            $0.contains("✓ France") && $0.contains("live · seq 1")
        }
        #expect(shown, "\(after)")
        #expect(after.contains("2 of 8 visited"))

        pane.send("q")
        let (quit, final) = pane.waitForScreen { $0.contains("terminal restored") }
        #expect(quit, "\(final)")
        #expect(final.contains("before watch"))
        #expect(final.contains("watch exited 0"))
        // The alternate screen is gone: no table left on the shell's screen.
        #expect(!final.contains("countries watch"))
        #expect(!final.contains("United States"))
    }

    @Test("select toggles the row under the cursor and says so; the service agrees")
    func selectTogglesRowUnderCursor() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let pane = try sandbox.tmux("\(CountriesBinary.path) select --heartbeat-ms 100; sleep 60")
        let (live, screen) = pane.waitForScreen { $0.contains("live · seq 0") && $0.contains("> 0") }
        #expect(live, "\(screen)")

        pane.send("j", "j", "Space")
        let (selected, after) = pane.waitForScreen {
            $0.contains("Selected country: France (now visited)") && $0.contains("live · seq 1")
        }
        #expect(selected, "\(after)")
        #expect(after.contains("> 2  ✓ France"))
        let list = Self.serviceList(sandbox)
        #expect(list?["seq"] as? Int == 1)
        let countries = list?["countries"] as? [[String: Any]] ?? []
        let visited = countries.filter { $0["visited"] as? Bool == true }.compactMap { $0["name"] as? String }
        #expect(visited == ["United States", "France"])
    }

    @Test("watch and select go stale with skeleton rows when the service dies, and come back by themselves")
    func staleThenLiveAcrossServiceRestart() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        let service = try sandbox.startService()
        #expect(sandbox.run(["toggle", "Italy"]).status == 0)
        let watch = try sandbox.tmux("\(CountriesBinary.path) watch --heartbeat-ms 100; sleep 60")
        let select = try sandbox.tmux("\(CountriesBinary.path) select --heartbeat-ms 100; sleep 60")
        for pane in [watch, select] {
            let (live, screen) = pane.waitForScreen { $0.contains("live · seq 1") && $0.contains("✓ Italy") }
            #expect(live, "\(pane.name): \(screen)")
        }

        #expect(service.signal(SIGKILL))
        for pane in [watch, select] {
            let (stale, screen) = pane.waitForScreen {
                $0.contains("stale") && !Self.seedNames.contains(where: $0.contains)
            }
            #expect(stale, "\(pane.name): \(screen)")
            #expect(screen.contains("░"), "skeleton rows: \(screen)")
            #expect(!screen.contains("live ·"))
        }

        try sandbox.startService()
        for pane in [watch, select] {
            let (live, screen) = pane.waitForScreen(upTo: .seconds(8)) {
                $0.contains("live · seq 1") && $0.contains("✓ Italy") && !$0.contains("stale")
            }
            #expect(live, "\(pane.name): \(screen)")
        }
        // And they follow changes made after the restart.
        #expect(sandbox.run(["toggle", "Spain"]).status == 0)
        for pane in [watch, select] {
            let (shown, screen) = pane.waitForScreen { $0.contains("✓ Spain") && $0.contains("live · seq 2") }
            #expect(shown, "\(pane.name): \(screen)")
        }
    }

    @Test(
        "watch scrolls a list longer than the terminal by hand, says it stopped following, follows again on f"
    )
    func watchScrollsByHand() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        // 249 rows in a 30-row pane.
        let service = try sandbox.launch([
            "serve", "--in-memory", "--seed", "world", "--command", sandbox.commandEndpoint, "--events",
            sandbox.eventsEndpoint, "--heartbeat-ms", "100",
        ])
        let ready = eventually(within: .seconds(10)) {
            !service.isRunning || sandbox.run(["list", "--timeout", "200", "--retries", "1"]).status == 0
        }
        #expect(ready && service.isRunning, "\(service.standardError.text)")
        let pane = try sandbox.tmux("\(CountriesBinary.path) watch --heartbeat-ms 100; sleep 60")
        var (held, screen) = pane.waitForScreen { $0.contains("live · seq 0") && $0.contains("Afghanistan") }
        #expect(held, "\(screen)")
        #expect(!screen.contains("Zimbabwe"))

        pane.send("End")
        (held, screen) = pane.waitForScreen { $0.contains("Zimbabwe") && !$0.contains("Afghanistan") }
        #expect(held, "End shows the last rows: \(screen)")
        #expect(!screen.contains("f follows"), "at the end it follows changes")

        pane.send("Home")
        (held, screen) = pane.waitForScreen { $0.contains("Afghanistan") && $0.contains("f follows changes") }
        #expect(held, "scrolled by hand, the header says it no longer follows: \(screen)")
        #expect(sandbox.run(["toggle", "Zimbabwe"]).status == 0)
        (held, screen) = pane.waitForScreen { $0.contains("live · seq 1") && $0.contains("last: Zimbabwe ✓") }
        #expect(held, "\(screen)")
        #expect(
            screen.contains("Afghanistan") && !screen.contains("✓ Zimbabwe"), "the view stays put: \(screen)")

        pane.send("f")
        (held, screen) = pane.waitForScreen { $0.contains("✓ Zimbabwe") && !$0.contains("f follows") }
        #expect(held, "f follows again and shows the change: \(screen)")

        pane.send("Home", "PageDown")
        (held, screen) = pane.waitForScreen { !$0.contains("Afghanistan") && $0.contains("f follows") }
        #expect(held, "\(screen)")
        pane.send("q")
        (held, screen) = pane.waitForScreen { !$0.contains("countries watch") }
        #expect(held, "\(screen)")
    }

    @Test("watch without a terminal prints the whole table after each event, and stops on SIGTERM")
    func watchToAPipePrintsTables() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let watch = try sandbox.launch(["watch", "--heartbeat-ms", "100"])
        #expect(eventually(within: .seconds(5)) { watch.standardOutput.text.contains("Romania") })
        #expect(sandbox.run(["toggle", "France"]).status == 0)
        #expect(
            eventually(within: .seconds(5)) {
                watch.standardOutput.text.components(separatedBy: "Romania").count == 3
            })
        #expect(watch.stop(), "watch must stop on SIGTERM")
        watch.waitForExit()
        #expect(watch.status == 0)

        let blocks = watch.standardOutput.text.components(separatedBy: "\n\n").filter { !$0.isEmpty }
        #expect(blocks.count == 2)
        guard blocks.count == 2 else { return }
        let first = blocks[0].split(separator: "\n").map(String.init)
        let second = blocks[1].split(separator: "\n").map(String.init)
        #expect(first.first == "seq 0 · 1 of 8 visited")
        #expect(second.first == "seq 1 · 2 of 8 visited")
        // Every row, every time.
        for block in [first, second] {
            #expect(block.count == 9)
            for name in Self.seedNames {
                #expect(block.contains { $0.contains(name) }, "\(name) in \(block)")
            }
        }
        #expect(second.contains { $0.contains("France") && $0.contains("✓") })
        #expect(!first.contains { $0.contains("France") && $0.contains("✓") })
    }

    @Test("two watch --json subscribers converge on the service's list")
    func watchJSONConverges() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let watchers = try (0..<2).map { _ in
            try sandbox.launch(["watch", "--json", "--heartbeat-ms", "100"])
        }
        for watcher in watchers {
            #expect(eventually(within: .seconds(5)) { !watcher.standardOutput.text.isEmpty })
        }
        // Several scripts toggling at once.
        let togglers = try (0..<3).map { index in
            try sandbox.launch(
                ["toggle"] + Array(repeating: Self.seedNames[index * 2], count: 7) + ["Moldova"])
        }
        for toggler in togglers {
            #expect(eventually(within: .seconds(10)) { !toggler.isRunning })
            toggler.waitForExit()
            #expect(toggler.status == 0)
        }
        let expected = try #require(Self.serviceList(sandbox))
        #expect(expected["seq"] as? Int == 24)
        for (index, watcher) in watchers.enumerated() {
            var last: NSDictionary?
            let converged = eventually(within: .seconds(5)) {
                let lines = watcher.standardOutput.textLines.filter { !$0.isEmpty }
                last = lines.last.flatMap(Self.parseObject).map { $0 as NSDictionary }
                return last == expected
            }
            #expect(converged, "watcher \(index): \(String(describing: last))")
            // One line per event after the snapshot, in seq order.
            let seqs = watcher.standardOutput.textLines.compactMap { Self.parseObject($0)?["seq"] as? Int }
            #expect(seqs == Array(0...24), "watcher \(index)")
        }
    }

    @Test("on-change runs once per event in seq order, not for the snapshot unless --initial, past a failure")
    func onChangeRunsPerEvent() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let script = "\(sandbox.directory)/record.sh"
        try """
        #!/bin/sh
        { echo "$COUNTRIES_SEQ $COUNTRIES_EVENT $COUNTRY_NAME $COUNTRY_VISITED"; cat; } >> "$1"
        [ "$COUNTRY_NAME" = "Italy" ] && exit 3
        exit 0
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let plainLog = "\(sandbox.directory)/plain.log"
        let initialLog = "\(sandbox.directory)/initial.log"
        let plain = try sandbox.launch([
            "on-change", "--heartbeat-ms", "100", "--", "/bin/sh", script, plainLog,
        ])
        let initial = try sandbox.launch([
            "on-change", "--initial", "--heartbeat-ms", "100", "--", "/bin/sh", script, initialLog,
        ])
        for process in [plain, initial] {
            #expect(
                eventually(within: .seconds(5)) { process.standardError.text.contains("live at seq 0") })
        }
        for name in ["France", "Italy", "Spain", "France"] {
            #expect(sandbox.run(["toggle", name]).status == 0)
        }

        func lines(_ path: String) -> [String] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
        }
        // Each run leaves two lines: the environment, then the event's JSON from stdin.
        #expect(
            eventually(within: .seconds(5)) { lines(plainLog).count >= 8 && lines(initialLog).count >= 10 })
        let expected = [
            "1 changed France true", "2 changed Italy true", "3 changed Spain true", "4 changed France false",
        ]
        let plainLines = lines(plainLog)
        #expect(plainLines.count == 8)
        #expect(stride(from: 0, to: plainLines.count, by: 2).map { plainLines[$0] } == expected)
        for (offset, index) in stride(from: 1, to: plainLines.count, by: 2).enumerated() {
            let event = Self.parseObject(plainLines[index])
            #expect(event?["seq"] as? Int == offset + 1, "\(plainLines[index])")
        }
        let initialLines = lines(initialLog)
        #expect(initialLines.count == 10)
        #expect(initialLines.first?.trimmingCharacters(in: .whitespaces) == "0 reset")
        #expect((Self.parseObject(initialLines.dropFirst().first ?? "")?["countries"] as? [Any])?.count == 8)
        #expect(Array(initialLines.dropFirst(2)) == plainLines)

        #expect(plain.stop(), "on-change must stop on SIGTERM")
        plain.waitForExit()
        #expect(
            plain.standardError.text.contains("exited with status 3 (seq 2)"), "\(plain.standardError.text)")
        #expect(!plain.standardError.text.contains("(seq 3)"))
    }
}
