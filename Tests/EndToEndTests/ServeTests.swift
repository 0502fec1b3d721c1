import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// `countries serve` itself: start-up, seeds, stores, signals, and durability across a crash.
@Suite struct ServeTests {
    @Test func startUpLogLineAndCleanStopOnSIGTERM() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("countries.db")
        let service = try Service(in: sandbox, options: ["--db", db])
        defer { service.stop(signal: SIGKILL) }

        let startLines = service.process.stderrSoFar.split(separator: "\n").filter { $0.contains("serving") }
        #expect(startLines.count == 1, "\(service.process.stderrSoFar)")
        let start = String(startLines.first ?? "")
        #expect(start.contains(" info: "), "\(start)")
        #expect(start.contains(sandbox.commandEndpoint) && start.contains(sandbox.eventsEndpoint), "\(start)")
        #expect(start.contains(db), "\(start)")
        #expect(start.contains("seq 0"), "\(start)")

        #expect(try service.run(["toggle", "France", "Spain"]).exitCode == 0)
        let stopped = try #require(service.stop(signal: SIGTERM))
        #expect(stopped.exitCode == 0, "\(stopped)")
        #expect(stopped.stderr.contains("SIGTERM received"), "\(stopped)")
        #expect(stopped.stderr.contains("stopped at seq 2"), "\(stopped)")
        #expect(stopped.stdout.isEmpty)
    }

    @Test func sigintStopsCleanlyToo() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop(signal: SIGKILL) }
        let stopped = try #require(service.stop(signal: SIGINT))
        #expect(stopped.exitCode == 0 && stopped.stderr.contains("stopped at seq 0"), "\(stopped)")
    }

    @Test func durableAcrossSIGKILLAndSeqNeverReused() throws {
        let sandbox = try Sandbox()
        let options = ["--db", sandbox.file("state.db")]
        var before = ""
        do {
            let service = try Service(in: sandbox, options: options)
            defer { service.stop(signal: SIGKILL) }
            #expect(try service.run(["toggle", "France", "3"]).exitCode == 0)
            #expect(try service.run(["add", "Peru"]).exitCode == 0)
            #expect(try service.run(["toggle", "france"]).exitCode == 0)
            let list = try service.run(["list", "--json"])
            #expect(try jsonReply(list)["seq"] as? Int == 4)
            before = list.stdout
            // Crash: no chance to flush or say goodbye.
            let killed = try #require(service.stop(signal: SIGKILL))
            #expect(killed.exitCode != 0)
            #expect(!killed.stderr.contains("stopped at seq"), "\(killed)")
        }

        let service = try Service(in: sandbox, options: options)
        defer { service.stop() }
        #expect(service.process.stderrSoFar.contains("seq 4, 9 countries"), "\(service.process.stderrSoFar)")
        let after = try service.run(["list", "--json"])
        #expect(try jsonReply(after)["seq"] as? Int == 4)
        #expect(after.stdout == before)

        let next = try service.run(["toggle", "Peru"])
        #expect(next.stdout == "Peru: visited (seq 5)\n", "\(next)")
        let history = try jsonReply(try service.run(["history", "--json", "--since", "0"]))
        let seqs = (history["events"] as? [[String: Any]])?.map { $0["seq"] as? Int }
        #expect(seqs == [1, 2, 3, 4, 5])
    }

    @Test func inMemoryStartsFreshEveryTime() throws {
        let sandbox = try Sandbox()
        var first = ""
        do {
            let service = try Service(in: sandbox, options: ["--in-memory"])
            defer { service.stop() }
            #expect(service.process.stderrSoFar.contains("store in memory"), "\(service.process.stderrSoFar)")
            #expect(try service.run(["toggle", "France"]).stdout == "France: visited (seq 1)\n")
            first = try service.run(["count", "--json"]).stdout
        }
        let service = try Service(in: sandbox, options: ["--in-memory"])
        defer { service.stop() }
        let second = try service.run(["count", "--json"]).stdout
        #expect(second.hasPrefix(#"{"count":8,"ok":true,"seq":0,"store":""#), "\(second)")
        // A new store, with a new identity: its seq 0 is not the first one's.
        func store(_ json: String) -> String? {
            ((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any])?["store"]
                as? String
        }
        #expect(store(first) != nil && store(second) != nil && store(first) != store(second))
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.path)
        #expect(!files.contains { $0.hasSuffix(".db") }, "\(files)")
    }

    @Test func busyEndpointExits69NamingIt() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let second = try Countries.run(
            [
                "serve", "--command", sandbox.commandEndpoint, "--events", "ipc://" + sandbox.file("ev2"),
                "--in-memory",
            ], timeout: .seconds(10))
        #expect(second.exitCode == 69, "\(second)")
        #expect(
            second.stderr.contains("cannot bind the command endpoint \(sandbox.commandEndpoint)"), "\(second)"
        )

        let thirdEvents = try Countries.run(
            [
                "serve", "--command", "ipc://" + sandbox.file("cmd2"), "--events", sandbox.eventsEndpoint,
                "--in-memory",
            ], timeout: .seconds(10))
        #expect(thirdEvents.exitCode == 69, "\(thirdEvents)")
        #expect(thirdEvents.stderr.contains("events endpoint \(sandbox.eventsEndpoint)"), "\(thirdEvents)")

        // The first service still answers on its endpoint.
        let count = try service.run(["count"])
        #expect(count.exitCode == 0 && count.stdout == "8\n", "\(count)")
        #expect(service.process.isRunning)
    }

    @Test func busyTCPPortExits69() throws {
        let sandbox = try Sandbox()
        // A service on an ephemeral port; its start-up line says which one.
        let tcp = try Countries.start([
            "serve", "--command", "tcp://127.0.0.1:*", "--events", "ipc://" + sandbox.file("tcp-ev"),
            "--in-memory", "--heartbeat-ms", "100",
        ])
        defer { tcp.stop() }
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        var endpoint: String?
        while endpoint == nil, ContinuousClock.now < deadline, tcp.isRunning {
            let log = tcp.stderrSoFar
            if let range = log.range(
                of: #"serving commands on (tcp://[0-9.:]+),"#, options: .regularExpression)
            {
                endpoint = String(log[range].dropFirst("serving commands on ".count).dropLast())
            } else {
                usleep(20_000)
            }
        }
        let busy = try #require(endpoint, "\(tcp.stderrSoFar)")
        let second = try Countries.run(
            ["serve", "--command", busy, "--events", "ipc://" + sandbox.file("ev3"), "--in-memory"],
            timeout: .seconds(10))
        #expect(second.exitCode == 69, "\(second)")
        #expect(second.stderr.contains(busy) && second.stderr.contains("Address already in use"), "\(second)")
    }

    @Test func worldSeedHas249Countries() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox, options: ["--in-memory", "--seed", "world"])
        defer { service.stop() }
        #expect(try service.run(["count"]).stdout == "249\n")
        let list = try jsonReply(try service.run(["list", "--json"]))
        let rows = try #require(list["countries"] as? [[String: Any]])
        #expect(rows.count == 249)
        #expect(rows.allSatisfy { $0["visited"] as? Bool == false })
        #expect(Set(rows.compactMap { $0["name"] as? String }).count == 249)
        #expect(try service.run(["get", "France"]).exitCode == 0)
    }

    @Test func seedFromATextFileAndResetPutsItBack() throws {
        let sandbox = try Sandbox()
        let seed = sandbox.file("seed.txt")
        try "# my trips\nPeru\n\n  Chile  \nJapan\n".write(toFile: seed, atomically: true, encoding: .utf8)
        let service = try Service(in: sandbox, options: ["--in-memory", "--seed", seed])
        defer { service.stop() }

        let list = try service.run(["list"])
        #expect(list.lines == ["0  Peru", "1  Chile", "2  Japan", "0 of 3 visited (seq 0)"], "\(list)")
        #expect(try service.run(["add", "Fiji"]).exitCode == 0)
        #expect(try service.run(["toggle", "peru"]).exitCode == 0)
        #expect(try service.run(["reset"]).stdout == "Reset to 3 countries (seq 3)\n")
        #expect(try service.run(["list"]).lines.last == "0 of 3 visited (seq 3)")
    }

    @Test func seedFromAJSONFile() throws {
        let sandbox = try Sandbox()
        let seed = sandbox.file("seed.json")
        try #"["Peru", {"name": "Chile", "visited": true}]"#.write(
            toFile: seed, atomically: true, encoding: .utf8)
        let service = try Service(in: sandbox, options: ["--in-memory", "--seed", seed])
        defer { service.stop() }
        #expect(try service.run(["list"]).lines == ["0  Peru", "1  Chile  [x]", "1 of 2 visited (seq 0)"])
    }

    @Test func badSeedFileExits65WithTheLineAndAMissingOne66() throws {
        let sandbox = try Sandbox()
        let seed = sandbox.file("bad.txt")
        try "Peru\n\nChile\n# comment\nperu\n".write(toFile: seed, atomically: true, encoding: .utf8)
        let result = try Countries.run(
            [
                "serve", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint, "--seed",
                seed,
            ],
            timeout: .seconds(10))
        #expect(result.exitCode == 65, "\(result)")
        #expect(result.stderr.contains(seed) && result.stderr.contains("line 5"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("cmd")), "bound anyway")

        let tooLong = sandbox.file("long.txt")
        try "Peru\n\(String(repeating: "x", count: 101))\n".write(
            toFile: tooLong, atomically: true, encoding: .utf8)
        let long = try Countries.run(
            [
                "serve", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint, "--seed",
                tooLong,
            ],
            timeout: .seconds(10))
        #expect(long.exitCode == 65 && long.stderr.contains("line 2"), "\(long)")

        let missing = try Countries.run(
            [
                "serve", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint, "--seed",
                sandbox.file("missing.txt"),
            ], timeout: .seconds(10))
        // Not there at all: no input (66), as `backup` without a store.
        #expect(missing.exitCode == 66 && missing.stderr.contains("missing.txt"), "\(missing)")
    }

    @Test func aJSONSeedThatDoesNotParseExits65WithItsLineNotFourCountries() throws {
        let sandbox = try Sandbox()
        // The issue's file: the trailing comma once made countries named "[", "\"France\",", ...
        let seed = sandbox.file("bad.json")
        try "[\n \"France\",\n \"Italy\",\n]\n".write(toFile: seed, atomically: true, encoding: .utf8)
        let result = try Countries.run(
            [
                "serve", "--in-memory", "--command", sandbox.commandEndpoint, "--events",
                sandbox.eventsEndpoint,
                "--seed", seed,
            ], timeout: .seconds(10))
        #expect(result.exitCode == 65, "\(result)")
        #expect(
            result.stderr.contains("seed file \(seed): line 4, column 1: not valid JSON")
                && result.stderr.contains("fix the JSON"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("cmd")), "bound anyway")
    }

    @Test func storeInAMissingDirectoryExits74() throws {
        let sandbox = try Sandbox()
        let result = try Countries.run(
            [
                "serve", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint, "--db",
                "/nonexistent/dir/x.db",
            ], timeout: .seconds(10))
        #expect(result.exitCode == 74, "\(result)")
        #expect(result.stderr.contains("/nonexistent/dir"), "\(result)")
        #expect(result.stderr.hasPrefix("countries: "), "\(result)")
    }

    @Test func aFileThatIsNotAStoreExits74() throws {
        let sandbox = try Sandbox()
        let db = sandbox.file("not-a-store.db")
        try String(repeating: "not sqlite at all\n", count: 100).write(
            toFile: db, atomically: true, encoding: .utf8)
        let result = try Countries.run(
            ["serve", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint, "--db", db],
            timeout: .seconds(10))
        #expect(result.exitCode == 74, "\(result)")
        #expect(result.stderr.contains(db), "\(result)")
    }
}
