import ArgumentParsing
import Foundation
@preconcurrency import Glibc

/// The bench's command line through the project's parser: help and errors in the format
/// `countries` uses (swift-argument-parser's), usage errors exit 64 as before.
enum BenchCommandLine {
    static let version = "0.1.0"

    static let spec: CommandSpec = {
        var spec = CommandSpec(
            name: "countries-bench",
            abstract: "The service against the bare-libzmq floor, Redis and etcd, in one run.",
            discussion:
                "Starts everything it measures itself, on loopback, and stops it by pid; prints every "
                + "figure next to its baseline and the targets' verdicts (docs/BENCHMARKS.md). "
                + "scripts/bench builds it and runs it.")
        for declaration in BenchOptions().declarations { declaration.declare(in: &spec) }
        return spec
    }()

    /// What `arguments` (without the executable's name) ask for; prints the help, the version or
    /// a usage error and exits when that is all there is to do.
    static func invocation(_ arguments: [String]) -> BenchInvocation {
        let parser = CommandLineParser(root: spec, version: version)
        do {
            switch try parser.parse(arguments, environment: [:]) {
            case .help(let text):
                print(text)
                exit(0)
            case .version:
                print(version)
                exit(0)
            case .run(let parsed):
                return try invocation(ParsedValues(parsed, declared: BenchOptions()))
            }
        } catch {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            exit(64)
        }
    }

    /// The modes exclude each other; the positional values belong to `--summarize`,
    /// `--floor-server` or `--etcd-shapes`.
    private static func invocation(_ command: ParsedValues<BenchOptions>) throws(UsageError)
        -> BenchInvocation
    {
        let values = command[\.values]
        let measuring = command[\.quick] || command[\.json] || command[\.svg] != nil || command[\.only] != nil
        if command[\.floorServer] {
            guard !command[\.summarize], !command[\.etcdShapes], !measuring else {
                throw command.usageError("--floor-server takes no other option")
            }
            guard values.count == 3 else {
                throw command.usageError("--floor-server needs COMMAND EVENTS MODE, three arguments")
            }
            return .floorServer(command: values[0], events: values[1], mode: values[2])
        }
        if command[\.etcdShapes] {
            guard !command[\.summarize], !measuring else {
                throw command.usageError("--etcd-shapes takes no other option")
            }
            guard (1...2).contains(values.count) else {
                throw command.usageError("--etcd-shapes needs URLS and at most SECONDS")
            }
            let seconds = values.count == 2 ? Double(values[1]) : 5
            guard let seconds, seconds > 0, seconds <= 600 else {
                throw command.usageError("--etcd-shapes: SECONDS must be a number above 0, at most 600")
            }
            return .etcdShapes(endpoints: values[0].split(separator: ",").map(String.init), seconds: seconds)
        }
        if command[\.summarize] {
            guard !measuring else { throw command.usageError("--summarize takes only the files of runs") }
            return .summarize(values)
        }
        guard values.isEmpty else {
            throw command.usageError(
                "Unexpected argument '\(values[0])' (arguments go with --summarize, --floor-server or --etcd-shapes)"
            )
        }
        let only = command[\.only].map { Set($0.split(separator: ",").map(String.init)) }
        // A misspelt name would otherwise run nothing for it and print a table without its rows.
        if let unknown = only?.subtracting(BenchOptions.scenarios).sorted(), !unknown.isEmpty {
            throw command.usageError(
                "--only does not know \(unknown.joined(separator: ", ")) (scenarios: \(BenchOptions.scenarios.joined(separator: ",")))"
            )
        }
        if only?.isEmpty == true { throw command.usageError("--only needs at least one scenario") }
        return .run(
            BenchConfiguration(
                quick: command[\.quick], json: command[\.json], svgPath: command[\.svg], only: only))
    }
}
