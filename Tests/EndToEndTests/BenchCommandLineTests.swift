import CountriesCore
import Foundation
import TestSupport
import Testing
import ZeroMQ

/// `countries-bench`'s command line: the options scripts/bench, scripts/test and Tests/profile
/// pass keep their names, and help and mistakes read as `countries`'s do. Nothing is measured.
@Suite struct BenchCommandLineTests {
    /// The bench built beside the `countries` under test.
    static let bench = URL(fileURLWithPath: CountriesBinary.path).deletingLastPathComponent()
        .appendingPathComponent("countries-bench").path

    static func run(_ arguments: [String]) throws -> Execution {
        try ChildProcess.run(bench, arguments, timeout: .seconds(15))
    }

    @Test func helpListsEveryOptionTheScriptsPass() throws {
        let result = try Self.run(["--help"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("USAGE: countries-bench "), "\(result)")
        for option in [
            "--quick", "--json", "--svg <file>", "--only <list>", "--summarize", "--floor-server",
            "--etcd-shapes",
        ] {
            #expect(result.stdout.contains("\n  \(option) "), "\(option) missing: \(result)")
        }
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: [
        (["--bogus"], "Unknown option '--bogus'"),
        (["--svg"], "Missing value for '--svg <file>'"),
        (["--quick", "extra"], "Unexpected argument 'extra'"),
        (
            ["--floor-server", "tcp://127.0.0.1:1", "tcp://127.0.0.1:2"],
            "--floor-server needs COMMAND EVENTS MODE"
        ),
        (["--summarize", "--json", "run.json"], "--summarize takes only the files of runs"),
        (["--etcd-shapes"], "--etcd-shapes needs URLS and at most SECONDS"),
        (["--etcd-shapes", "http://127.0.0.1:1", "0"], "--etcd-shapes: SECONDS must be a number above 0"),
        (["--etcd-shapes", "http://127.0.0.1:1", "soon"], "--etcd-shapes: SECONDS must be a number above 0"),
        (["--etcd-shapes", "--quick", "http://127.0.0.1:1"], "--etcd-shapes takes no other option"),
        (["--floor-server", "--etcd-shapes", "a", "b", "c"], "--floor-server takes no other option"),
        (["--only", "toggle,replicatd"], "--only does not know replicatd (scenarios: floor,toggle,"),
        (["--only", ","], "--only needs at least one scenario"),
    ])
    func mistakesAreUsageErrorsInTheFormatOfCountries(arguments: [String], message: String) throws {
        let result = try Self.run(arguments)
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("Error: \(message)"), "\(result)")
        #expect(result.stderr.contains("\nUsage: countries-bench "), "\(result)")
        #expect(
            result.stderr.hasSuffix("  See 'countries-bench --help' for more information.\n"), "\(result)")
    }

    /// The by-hand floor that does the protocol's own work with the project's core
    /// (`publish-core`, docs/BENCHMARKS.md, "Stop 59"): each toggle answered and published as the
    /// service does, with the seq it took; a request that is not a change, or not JSON, gets an
    /// error reply and the floor goes on.
    @Test(.hangGuard()) func theCoreFloorAnswersAndPublishesAToggleAsTheServiceDoes() throws {
        let scratch = try ScratchDirectory()
        let command = "ipc://\(scratch.file("c"))"
        let events = "ipc://\(scratch.file("e"))"
        let floor = try ChildProcess(Self.bench, ["--floor-server", command, events, "publish-core"])
        defer { floor.stop() }
        let context = try Context()
        let subscriber = try context.makeSocket(.sub)
        let client = try context.makeSocket(.req)
        defer {
            subscriber.close()
            client.close()
            context.terminate()
        }
        for socket in [subscriber, client] { try socket.setOption(.linger, 0) }
        try subscriber.setOption(.receiveTimeout, Int32(100 * testSlowdown))
        try subscriber.subscribe()
        try subscriber.connect(events)
        try client.setOption(.receiveTimeout, Int32(10_000 * testSlowdown))
        try client.connect(command)
        func ask(_ json: String) throws -> Reply {
            try client.send([Data(json.utf8)])
            return try Reply.decode(try #require(try client.receive()?.last, "no reply to \(json)"))
        }
        // A subscription takes effect a little after it is made: toggle until an event comes.
        var toggles: UInt64 = 0
        var event: Event?
        let arrived = try eventually(within: .seconds(10)) {
            let reply = try ask(#"{"op":"toggle","index":2,"id":"floor-\#(toggles)"}"#)
            toggles += 1
            #expect(reply.ok && reply.seq == toggles, "\(reply)")
            #expect(reply.country?.index == 2 && reply.country?.visited == (toggles % 2 == 1), "\(reply)")
            guard let frames = try subscriber.receive() else { return false }
            #expect(frames.first == Data("country.changed".utf8))
            event = try Event.decode(try #require(frames.last))
            return true
        }
        #expect(arrived, "no event after \(toggles) toggles")
        let published = try #require(event)
        #expect(published.seq >= 1 && published.seq <= toggles)
        #expect(
            published.kind
                == .changed(IndexedCountry(index: 2, name: "France", visited: published.seq % 2 == 1)))
        #expect(try ask(#"{"op":"list"}"#).error?.code == "bad_request")
        #expect(try ask("not JSON").error?.code == "bad_request")
        #expect(try ask(#"{"op":"toggle","index":2}"#).seq == toggles + 1)
    }

    /// `--etcd-shapes` on a real etcd, a thousandth of a second per measurement, shorter than a
    /// writer's set-up and first transaction on a busy machine: every setting three times, each
    /// with at least a transaction per writer and a rate over the time it took, none failed,
    /// and the keys it wrote deleted.
    @Test(.hangGuard(), .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
    func etcdShapesMeasuresEverySettingAndLeavesNoKeys() throws {
        let etcd = try EtcdCluster(members: 1)
        defer { etcd.stop() }
        let result = try ChildProcess.run(
            Self.bench, ["--etcd-shapes", etcd.clientURLs[0], "0.001"], timeout: .seconds(120))
        #expect(result.exitCode == 0, "\(result)")
        let rows = result.lines.dropFirst().map { $0.split(separator: " ").map(String.init) }
        #expect(result.lines.first?.hasPrefix("shape ") == true, "\(result)")
        #expect(rows.count == 24, "\(result)")
        #expect(rows.filter { $0.first == "commit" }.count == 9, "\(result)")
        #expect(rows.filter { $0.first == "lean-ids" }.count == 3, "\(result)")
        #expect(rows.filter { $0.first == "unsequenced" }.count == 6, "\(result)")
        #expect(rows.filter { $0.first == "floor" }.count == 3, "\(result)")
        #expect(rows.filter { $0.first == "floor-watched" }.count == 3, "\(result)")
        // Every measurement committed something, and nothing it sent was refused.
        #expect(rows.allSatisfy { $0.count == 8 && (Double($0[3]) ?? 0) > 0 && $0[7] == "0" }, "\(result)")
        let left = try ChildProcess.run(
            EtcdCluster.etcdctl,
            [
                "--endpoints", etcd.clientURLs[0], "get", "--prefix", "/countries-bench-shapes/",
                "--keys-only",
            ],
            environment: ["ETCDCTL_API": "3"], timeout: .seconds(10))
        #expect(
            left.exitCode == 0 && left.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
            "\(left)")
    }

    @Test func summarizeReadsTheRunsItIsGiven() throws {
        let scratch = try ScratchDirectory(prefix: "cbench")
        defer { scratch.remove() }
        let none = try Self.run(["--summarize"])
        #expect(none.exitCode == 0 && none.stdout == "no runs to summarize\n", "\(none)")
        let notARun = scratch.file("not-a-run.json")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: notARun))
        let refused = try Self.run(["--summarize", notARun])
        #expect(refused.exitCode == 65, "\(refused)")
        #expect(refused.stderr == "countries-bench: \(notARun) is not the JSON of a run\n", "\(refused)")
    }
}
