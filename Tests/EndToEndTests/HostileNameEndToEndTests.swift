import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// Issue 22, item 4: names from a hostile publisher or service never reach a terminal raw. The
/// built binary runs against a real service plus a raw PUB that forges a `country.added` whose
/// name holds a title change (OSC ... BEL), a screen clear (CSI 2J), the 8-bit CSI, a
/// right-to-left override and DEL; and against a raw ROUTER that answers with such names.
@Suite struct HostileNameEndToEndTests {
    static let hostile = "Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"
    /// How the clients show it.
    static let shown = #"Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"#

    /// The byte sequences a terminal acts on that the hostile name holds: ESC, BEL, the 8-bit
    /// CSI (U+009B in UTF-8), RIGHT-TO-LEFT OVERRIDE (U+202E in UTF-8), DEL.
    static let raw: [(String, [UInt8])] = [
        ("ESC", [0x1B]), ("BEL", [0x07]), ("U+009B", [0xC2, 0x9B]), ("U+202E", [0xE2, 0x80, 0xAE]),
        ("DEL", [0x7F]),
    ]

    /// The raw control sequences found in `bytes`, by name.
    static func rawControls(in bytes: Data) -> [String] {
        let bytes = [UInt8](bytes)
        return raw.filter { _, sequence in
            bytes.indices.contains { start in bytes[start...].starts(with: sequence) }
        }.map(\.0)
    }

    /// `events` and piped `watch` follow a real service and a hostile publisher beside it (as a
    /// relay would forward it). The forged event is dropped, reported once on stderr with the
    /// name escaped, caught up from the service as a gap, and nothing raw is printed; the
    /// service's own next change still comes through.
    @Test func eventsAndPipedWatchDropAForgedNameAndPrintNothingRaw() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        let store = try #require(try jsonReply(service.run(["status", "--json"]))["store"] as? String)

        let context = try Context()
        let publisher = try context.makeSocket(.pub)
        defer { publisher.close() }
        try publisher.setOption(.linger, 0)
        let hostileEndpoint = sandbox.scratch.ipc("hostile")
        try publisher.bind(hostileEndpoint)

        let follow = [
            "--heartbeat-ms", "100", "--command", sandbox.commandEndpoint, "--events",
            "\(sandbox.eventsEndpoint),\(hostileEndpoint)",
        ]
        let events = try Countries.start(["events"] + follow)
        defer { events.stop(signal: SIGKILL) }
        let watch = try Countries.start(["watch"] + follow)
        defer { watch.stop(signal: SIGKILL) }
        let clients = [("events", events), ("watch", watch)]
        #expect(
            eventually(within: .seconds(10)) {
                clients.allSatisfy { $0.1.stderrSoFar.contains("live at seq 1") }
            },
            "\(events.stderrSoFar) | \(watch.stderrSoFar)")

        // The service's next seq, its store: the forgery looks like the next change. Sent again
        // until both have heard it (a SUB misses what is published before it is connected).
        let forged = Event(
            seq: 2, kind: .added(IndexedCountry(index: 8, name: Self.hostile, visited: true)), store: store)
        let reported = eventually(within: .seconds(10), every: .milliseconds(100)) {
            _ = try? publisher.send([Data(Topic.countryAdded.rawValue.utf8), forged.encoded()])
            return clients.allSatisfy { $0.1.stderrSoFar.contains("protocol violation") }
        }
        #expect(reported, "\(events.stderrSoFar) | \(watch.stderrSoFar)")
        // Stale for that reason, then live again at the service's seq once it has been asked.
        #expect(
            eventually(within: .seconds(10)) {
                clients.allSatisfy {
                    $0.1.stderrSoFar.contains(
                        "stale: dropped event 2: its name breaks the rules; waiting for \(sandbox.commandEndpoint)"
                    )
                        && $0.1.stderrSoFar.components(separatedBy: "live at seq 1\n").count >= 3
                }
            }, "\(events.stderrSoFar) | \(watch.stderrSoFar)")

        // The service's own seq 2 comes through as usual.
        #expect(try service.run(["toggle", "Italy"]).exitCode == 0)
        #expect(
            eventually(within: .seconds(10)) {
                events.stdoutSoFar.contains("2  country.changed") && watch.stdoutSoFar.contains("\nseq 2")
            }, "\(events.stdoutSoFar) | \(watch.stdoutSoFar)")
        for (_, client) in clients { client.stop(signal: SIGTERM) }

        for (name, client) in clients {
            let run = try client.finish(timeout: .seconds(5))
            #expect(run.exitCode == 0, "\(name): \(run)")
            for (stream, log) in [("stdout", client.stdout), ("stderr", client.stderr)] {
                #expect(
                    Self.rawControls(in: log.bytes).isEmpty,
                    "\(name) \(stream): \(Self.rawControls(in: log.bytes))")
            }
            let violations = run.stderr.split(separator: "\n").filter { $0.contains("protocol violation") }
            #expect(violations.count == 1, "reported once: \(run.stderr)")
            #expect(
                violations.first?.contains(
                    #"event 2 (country.added) names ""# + Self.shown
                        + #"", which breaks the name rules: a country name must not contain control characters"#
                )
                    == true, "\(name): \(run.stderr)")
            #expect(!run.stdout.contains("Evil"), "the forged row is never shown: \(run.stdout)")
        }
        #expect(events.stdoutSoFar.contains("2  country.changed  3 Italy"), "\(events.stdoutSoFar)")
    }

    /// A hostile service answers `list`, `get`, `history` and `status` with the name, and a
    /// refusal quoting it: every text and `--json` output is escaped, and the JSON reads back
    /// as the very name.
    @Test func repliesOfAHostileServiceArePrintedEscaped() throws {
        let sandbox = try Sandbox()
        let context = try Context()
        let router = try context.makeSocket(.router)
        defer { router.close() }
        try router.setOption(.linger, 0)
        try router.setOption(.receiveTimeout, 100)
        let endpoint = sandbox.scratch.ipc("hostile-command")
        try router.bind(endpoint)
        let row = IndexedCountry(index: 0, name: Self.hostile, visited: true)

        /// Runs `countries ARGS` against the router, answering each request with `answer`.
        func run(_ arguments: [String]) throws -> (Execution, stdout: Data, stderr: Data) {
            let client = try Countries.start(arguments + ["--command", endpoint, "--timeout", "3000"])
            defer { client.stop(signal: SIGKILL) }
            let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
            while client.isRunning, ContinuousClock.now < deadline {
                guard let frames = try router.receive(), let body = frames.last else { continue }
                let request = try Request.decode(body)
                var reply: Reply
                switch request.command {
                case .query(.list): reply = Reply(seq: 3, countries: [row])
                case .query(.get):
                    reply = Reply(error: CountriesError(.notFound, "no country named \(Self.hostile)"))
                case .history: reply = Reply(seq: 3, events: [Event(seq: 3, kind: .added(row))])
                default:
                    reply = Reply(seq: 3, count: 1)
                    reply.store = Self.hostile
                }
                _ = try router.send(Array(frames.dropLast()) + [reply.encoded()])
            }
            let execution = try client.finish(timeout: .seconds(5))
            return (execution, client.stdout.bytes, client.stderr.bytes)
        }

        for arguments in [["list"], ["get", "0"], ["history"], ["status"]] {
            for json in [false, true] {
                let (execution, stdout, stderr) = try run(arguments + (json ? ["--json"] : []))
                let label = (arguments + (json ? ["--json"] : [])).joined(separator: " ")
                #expect(Self.rawControls(in: stdout).isEmpty, "\(label) stdout: \(execution)")
                #expect(Self.rawControls(in: stderr).isEmpty, "\(label) stderr: \(execution)")
                let output = arguments == ["get", "0"] && !json ? execution.stderr : execution.stdout
                if json {
                    // Valid JSON that decodes to the name itself.
                    let line = String(execution.stdout.split(separator: "\n").first ?? "")
                    let reply = try Reply.decode(Data(line.utf8))
                    let names =
                        (reply.countries ?? []).map(\.name)
                        + (reply.events ?? []).compactMap { $0.country?.name }
                        + [reply.store, reply.failure?.message].compactMap { $0 }
                    #expect(names.contains { $0.contains(Self.hostile) }, "\(label): \(execution)")
                } else {
                    #expect(output.contains(Self.shown), "\(label): \(execution)")
                }
            }
        }
    }
}
