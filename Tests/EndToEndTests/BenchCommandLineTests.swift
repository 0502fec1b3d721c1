import Foundation
import TestSupport
import Testing

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

    /// `--etcd-shapes` on a real etcd, a fraction of a second per measurement: every setting
    /// three times, none failed, and the keys it wrote deleted.
    @Test(.hangGuard(), .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
    func etcdShapesMeasuresEverySettingAndLeavesNoKeys() throws {
        let etcd = try EtcdCluster(members: 1)
        defer { etcd.stop() }
        let result = try ChildProcess.run(
            Self.bench, ["--etcd-shapes", etcd.clientURLs[0], "0.2"], timeout: .seconds(120))
        #expect(result.exitCode == 0, "\(result)")
        let rows = result.lines.dropFirst().map { $0.split(separator: " ").map(String.init) }
        #expect(result.lines.first?.hasPrefix("shape ") == true, "\(result)")
        #expect(rows.count == 18, "\(result)")
        #expect(rows.filter { $0.first == "commit" }.count == 9, "\(result)")
        #expect(rows.filter { $0.first == "unsequenced" }.count == 6, "\(result)")
        #expect(rows.filter { $0.first == "floor" }.count == 3, "\(result)")
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
