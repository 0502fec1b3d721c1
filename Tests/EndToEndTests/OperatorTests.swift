import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// Service hygiene and fan-out, as an operator uses them: pid files, JSON logs, the status an
/// operator reads, and relays (on one host; the multi-host relay tests use namespaces).
@Suite struct OperatorTests {
    @Test func pidFileIsWrittenRefusedWhileLiveAndRemovedOnStop() throws {
        let sandbox = try Sandbox()
        let pidFile = sandbox.file("countries.pid")
        let service = try Service(in: sandbox, options: ["--in-memory", "--pidfile", pidFile])
        defer { service.stop(signal: SIGKILL) }

        let written = try String(contentsOfFile: pidFile, encoding: .utf8)
        #expect(written == "\(service.process.pid)\n")

        // A second service with the same pid file is refused while the first runs.
        let second = try Countries.run(
            [
                "serve", "--in-memory", "--command", "ipc://" + sandbox.file("c2"), "--events",
                "ipc://" + sandbox.file("e2"), "--pidfile", pidFile,
            ], timeout: .seconds(10))
        #expect(second.exitCode == 73, "\(second)")
        #expect(second.stderr.contains("held by process \(service.process.pid)"), "\(second)")

        let stopped = try #require(service.stop(signal: SIGTERM))
        #expect(stopped.exitCode == 0, "\(stopped)")
        #expect(!FileManager.default.fileExists(atPath: pidFile))
    }

    @Test func jsonLogsAreOneObjectPerLine() throws {
        let sandbox = try Sandbox()
        let service = try Service(
            in: sandbox, options: ["--in-memory", "--log-format", "json", "--log-level", "debug"])
        defer { service.stop(signal: SIGKILL) }
        #expect(try service.run(["toggle", "Atlantis"]).exitCode == 1)
        let stopped = try #require(service.stop(signal: SIGTERM))
        let lines = stopped.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count >= 3, "\(stopped)")
        for line in lines {
            let object = try jsonObject(line)
            #expect(
                object["time"] is String && object["level"] is String && object["message"] is String,
                "\(line)")
        }
        // A client's mistake is its request's debug line, not a server warning
        // (docs/OPERATIONS.md).
        #expect(lines.contains { $0.contains("\"level\":\"debug\"") && $0.contains("not_found") }, "\(lines)")
        #expect(!lines.contains { $0.contains("\"level\":\"warning\"") }, "\(lines)")
    }

    @Test func relayLogsAsJSONToo() throws {
        let sandbox = try Sandbox()
        let relay = try Countries.start([
            "relay", "--from", sandbox.eventsEndpoint, "--bind", "ipc://" + sandbox.file("relay"),
            "--log-format", "json",
        ])
        defer { relay.stop(signal: SIGKILL) }
        #expect(relay.stderr.waitFor(timeout: .seconds(10)) { $0.contains("relaying") } != nil)
        #expect(relay.stop(signal: SIGTERM) == 0)
        let lines = relay.stderr.waitForEnd().split(separator: "\n").map(String.init)
        #expect(lines.count >= 2, "\(lines)")
        for line in lines {
            let object = try jsonObject(line)
            #expect(object["level"] is String && object["message"] is String, "\(line)")
        }
    }

    /// libzmq gives up an upstream for good after a frame past the largest event: one such
    /// frame (from a broken or hostile publisher at `--from`) cut the relay off, and its
    /// subscribers with it, until it was restarted. It connects anew after 5 s of silence.
    @Test(.hangGuard()) func aRelayIsNotCutOffByOneOversizedFrame() throws {
        let sandbox = try Sandbox()
        let context = try Context()
        defer { context.terminate() }
        let publisher = try context.makeSocket(.pub)
        defer { publisher.close() }
        try publisher.setOption(.linger, 0)
        try publisher.bind(sandbox.eventsEndpoint)
        let downstream = "ipc://" + sandbox.file("relay")
        let relay = try Countries.start(["relay", "--from", sandbox.eventsEndpoint, "--bind", downstream])
        defer { relay.stop(signal: SIGKILL) }
        let subscriber = try context.makeSocket(.sub)
        defer { subscriber.close() }
        try subscriber.setOption(.linger, 0)
        try subscriber.subscribe("heartbeat")
        try subscriber.connect(downstream)
        func relayed(_ body: String, within limit: Duration) -> Bool {
            eventually(within: limit * testSlowdown, every: .milliseconds(50)) {
                _ = try? publisher.send([Data("heartbeat".utf8), Data(body.utf8)])
                while let frames = try? subscriber.receive(dontWait: true) {
                    if frames.last == Data(body.utf8) { return true }
                }
                return false
            }
        }
        try #require(relayed(#"{"seq":0}"#, within: .seconds(10)), "\(relay.stderr.text)")

        _ = try publisher.send([Data("heartbeat".utf8), Data(count: EventShape.maximumBodyBytes + 1)])
        #expect(relayed(#"{"seq":1}"#, within: .seconds(15)), "cut off: \(relay.stderr.text)")
    }

    /// Without `--metrics` a relay whose upstream was silent said nothing at all.
    @Test func aRelayWhoseUpstreamIsSilentSaysSoAndWhenItIsBack() throws {
        let sandbox = try Sandbox()
        let relay = try Countries.start([
            "relay", "--from", sandbox.eventsEndpoint, "--bind", "ipc://" + sandbox.file("relay"),
        ])
        defer { relay.stop(signal: SIGKILL) }
        let upstream = sandbox.eventsEndpoint
        #expect(
            relay.stderr.waitFor(timeout: .seconds(10)) {
                $0.contains("warning: nothing received from upstream \(upstream) in the 3 s since the start")
            } != nil, "\(relay.stderr.text)")
        let service = try Service(in: sandbox)
        defer { service.stop(signal: SIGKILL) }
        #expect(
            relay.stderr.waitFor(timeout: .seconds(10)) {
                $0.contains("upstream \(upstream) heard again after")
            }
                != nil, "\(relay.stderr.text)")
        service.stop(signal: SIGKILL)
        #expect(
            relay.stderr.waitFor(timeout: .seconds(10)) {
                $0.contains("nothing received from upstream \(upstream) for 3 s")
            } != nil, "\(relay.stderr.text)")
    }

    @Test func statusReportsWhatAnOperatorNeeds() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox, options: ["--db", sandbox.file("s.db")])
        defer { service.stop(signal: SIGKILL) }
        _ = try service.run(["toggle", "France"])
        _ = try service.run(["toggle", "Narnia"])

        // Two subscribers attached: status counts them.
        let watchers = try (0..<2).map { _ in
            try Countries.start(
                ["watch", "--json", "--heartbeat-ms", "100", "--events", sandbox.eventsEndpoint]
                    + sandbox.client)
        }
        defer { for watcher in watchers { watcher.stop(signal: SIGKILL) } }

        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        var status: [String: Any] = [:]
        repeat {
            status = try jsonReply(try service.run(["status", "--json"]))
            if (status["subscribers"] as? Int) == 2 { break }
            usleep(50_000)
        } while ContinuousClock.now < deadline
        #expect(status["subscribers"] as? Int == 2, "\(status)")
        #expect(status["seq"] as? Int == 1)
        #expect(status["commands_refused"] as? Int == 1)
        #expect((status["commands_served"] as? Int ?? 0) >= 2)
        #expect((status["uptime_seconds"] as? Double ?? -1) >= 0)
        #expect((status["store_bytes"] as? Int ?? 0) > 0)
        #expect(status["version"] as? String == "0.1.0")

        let human = try service.run(["status"])
        for field in ["uptime:", "seq:", "store:", "commands served:", "commands refused:", "subscribers:"] {
            #expect(human.stdout.contains(field), "\(human)")
        }
    }

    @Test func watchThroughTwoRelaysConverges() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop(signal: SIGKILL) }
        let first = "ipc://" + sandbox.file("r1")
        let second = "ipc://" + sandbox.file("r2")
        let relays = try [
            Countries.start(["relay", "--from", sandbox.eventsEndpoint, "--bind", first]),
            Countries.start(["relay", "--from", first, "--bind", second]),
        ]
        defer { for relay in relays { relay.stop(signal: SIGKILL) } }

        let watcher = try Countries.start(
            ["watch", "--json", "--heartbeat-ms", "100", "--events", second] + sandbox.client)
        defer { watcher.stop(signal: SIGKILL) }
        // Live through the relays: heartbeats pass through them.
        let liveBy = ContinuousClock.now + .seconds(10) * testSlowdown
        while !watcher.stderrSoFar.contains("live at seq") && ContinuousClock.now < liveBy { usleep(20_000) }
        #expect(watcher.stderrSoFar.contains("live at seq 0"), "\(watcher.stderrSoFar)")

        for target in ["France", "Italy", "0"] {
            #expect(try service.run(["toggle", target]).exitCode == 0)
        }
        let expected = try jsonReply(try service.run(["list", "--json"]))
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        var last: [String: Any] = [:]
        repeat {
            if let line = watcher.stdoutSoFar.split(separator: "\n").last {
                last = (try? jsonObject(String(line))) ?? [:]
            }
            if last["seq"] as? Int == 3 { break }
            usleep(20_000)
        } while ContinuousClock.now < deadline
        #expect(last["seq"] as? Int == 3, "\(watcher.stdoutSoFar)")
        #expect(
            (last["countries"] as? [[String: Any]])?.map { $0["visited"] as? Bool }
                == (expected["countries"] as? [[String: Any]])?.map { $0["visited"] as? Bool })
    }

    @Test func relayRefusesAnExposedPlaintextBind() throws {
        let result = try Countries.run(["relay", "--bind", "tcp://0.0.0.0:45999"], timeout: .seconds(10))
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("--insecure"), "\(result)")
    }
}
