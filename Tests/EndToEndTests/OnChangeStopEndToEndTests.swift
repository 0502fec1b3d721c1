import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// `countries on-change` told to stop while its command runs (README, "Run a command on every
/// change"): it says so and waits for the command, whose seq is then done; a second signal
/// ends the command, and its seq is not done, so a cursor runs it again. Before, it waited
/// without a word however many signals came.
@Suite("on-change stopped while its command runs", .serialized)
struct OnChangeStopEndToEndTests {
    private static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The seq the cursor file holds.
    private static func cursorSeq(_ path: String) -> Int? {
        SubscriberEndToEndTests.parseObject(lines(path).first ?? "")?["seq"] as? Int
    }

    @Test func oneSignalWaitsForTheCommandAndASecondEndsIt() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let log = sandbox.scratch.file("runs.log")
        let cursor = sandbox.scratch.file("cursor.json")
        let release = sandbox.scratch.file("release")
        let script = sandbox.scratch.file("hold.sh")
        // Each run records its seq, then holds until the test releases it (60 s at most, so
        // that a failed test leaves nothing running).
        try """
        #!/bin/sh
        echo "$COUNTRIES_SEQ" >> "$1"
        i=0
        while [ ! -e "$2" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let arguments = [
            "on-change", "--cursor", cursor, "--heartbeat-ms", "100", "--", "/bin/sh", script, log, release,
        ]

        // One signal: said at once, the command finishes, its seq is done, then it stops.
        var runner = try sandbox.launch(arguments)
        #expect(eventually(within: .seconds(5)) { runner.standardError.text.contains("live at seq 0") })
        #expect(sandbox.run(["toggle", "France"]).status == 0)
        #expect(eventually(within: .seconds(5)) { Self.lines(log) == ["1"] })
        runner.child.signal(SIGTERM)
        #expect(
            eventually(within: .seconds(5)) {
                runner.standardError.text.contains(
                    "stopping once /bin/sh (seq 1) finishes; send the signal again to stop it now")
            }, "\(runner.standardError.text)")
        #expect(runner.isRunning, "it stopped before its command finished")
        #expect(FileManager.default.createFile(atPath: release, contents: Data()))
        runner.waitForExit()
        #expect(runner.status == 0, "\(runner.standardError.text)")
        #expect(Self.cursorSeq(cursor) == 1)

        // Two signals: the command is ended, and its seq is not done.
        try FileManager.default.removeItem(atPath: release)
        runner = try sandbox.launch(arguments)
        #expect(eventually(within: .seconds(5)) { runner.standardError.text.contains("live at seq 1") })
        #expect(sandbox.run(["toggle", "Italy"]).status == 0)
        #expect(eventually(within: .seconds(5)) { Self.lines(log) == ["1", "2"] })
        runner.child.signal(SIGTERM)
        #expect(eventually(within: .seconds(5)) { runner.standardError.text.contains("stopping once") })
        #expect(runner.signal(SIGTERM, upTo: .seconds(5)), "a second signal did not end it")
        #expect(runner.status == 0)
        #expect(
            runner.standardError.text.contains("stopping /bin/sh (seq 2) with SIGTERM; seq 2 is not done"),
            "\(runner.standardError.text)")
        #expect(Self.cursorSeq(cursor) == 1, "an ended command's seq was taken as done")

        // Started again, it runs seq 2 again.
        #expect(FileManager.default.createFile(atPath: release, contents: Data()))
        runner = try sandbox.launch(arguments)
        #expect(
            eventually(within: .seconds(5)) { Self.cursorSeq(cursor) == 2 },
            "\(Self.lines(log)) \(runner.standardError.text)")
        #expect(Self.lines(log) == ["1", "2", "2"])
        #expect(runner.stop())
    }
}
