import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

// Runs the real `countries` executable, the way a user or a script does: arguments, environment,
// stdout, stderr and an exit code. Nothing here links the executable's code.

// `Execution`, `ChildProcess`, `ScratchDirectory`, `eventually` and the binary come from the
// shared harness, TestSupport.

/// A `countries` process of this suite (the shared child process).
typealias RunningProcess = ChildProcess

extension ChildProcess {
    /// What the process has written to stderr so far.
    var stderrSoFar: String { stderr.text }
    /// What the process has written to stdout so far.
    var stdoutSoFar: String { stdout.text }
}

/// Runs the executable.
enum Countries {
    /// The binary under test (``CountriesBinary/path``).
    static var binary: URL { URL(fileURLWithPath: CountriesBinary.path) }

    /// Runs `countries arguments...` to the end (killed after `timeout`) and returns what it did;
    /// the `AssertExecuteCommand` of this suite.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(15)
    ) throws -> Execution {
        try start(arguments, environment: environment).finish(timeout: timeout)
    }

    /// Starts `countries arguments...` and returns at once.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningProcess {
        try ChildProcess.countries(arguments, environment: CountriesBinary.environment(adding: environment))
    }
}

/// A temporary directory of a test's own, removed when the test is done: the service's ipc
/// endpoints live here.
final class Sandbox {
    let scratch: ScratchDirectory
    var path: String { scratch.path }

    init() throws {
        scratch = try ScratchDirectory(prefix: "ce2e")
    }

    func file(_ name: String) -> String { scratch.file(name) }

    var commandEndpoint: String { scratch.ipc("cmd") }
    var eventsEndpoint: String { scratch.ipc("ev") }

    /// The options that point a client at this sandbox's service.
    var client: [String] { ["--command", commandEndpoint] }
    /// The same, with a tight retry budget for a service that is up.
    var quickClient: [String] { client + ["--timeout", "3000", "--retries", "2"] }
}

/// A running `countries serve` in a sandbox. Stop it with ``stop(signal:)`` from a `defer`.
final class Service {
    let sandbox: Sandbox
    let process: RunningProcess

    /// Starts `countries serve` on the sandbox's ipc endpoints with a short heartbeat and waits
    /// until it answers.
    init(
        in sandbox: Sandbox, options: [String] = ["--in-memory"], environment: [String: String] = [:],
        waitUntilReady: Bool = true
    ) throws {
        self.sandbox = sandbox
        process = try Countries.start(
            [
                "serve", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint,
                "--heartbeat-ms", "100",
            ] + options, environment: environment)
        if waitUntilReady {
            do {
                try self.waitUntilReady()
            } catch {
                process.stop(signal: SIGKILL)
                throw error
            }
        }
    }

    /// Polls `count` until it succeeds (bounded); fails early when the service exited.
    func waitUntilReady(within limit: Duration = .seconds(15)) throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let status = process.exitStatus {
                throw HarnessFailure("countries serve exited with \(status): \(process.stderr.text)")
            }
            let probe = try Countries.run(
                ["count", "--timeout", "200", "--retries", "1"] + sandbox.client, timeout: .seconds(10))
            if probe.exitCode == 0 { return }
            // Nothing listening yet is seen at once: pace the probes.
            sleep(for: .milliseconds(20))
        }
        throw HarnessFailure("no answer within \(limit): \(process.stderr.text)")
    }

    /// Stops the service and returns how it ended (stderr holds its log). The grace grows with
    /// ``testSlowdown``: under ASan a service that had logged "stopped" took over 5 s to exit
    /// once, among a loaded run's many processes.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Execution? {
        process.stop(signal: signal, grace: .seconds(5) * testSlowdown)
        return try? process.finish(timeout: .seconds(5))
    }

    /// Runs a client subcommand against this service.
    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Execution {
        try Countries.run(arguments + sandbox.quickClient, environment: environment)
    }
}

/// Parses one line of JSON into an object.
func jsonObject(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(value as? [String: Any], "not a JSON object: \(line)", sourceLocation: sourceLocation)
}

/// Parses `--json` output: exactly one line holding an object.
func jsonReply(_ execution: Execution, sourceLocation: SourceLocation = #_sourceLocation) throws
    -> [String: Any]
{
    let lines = execution.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(
        lines.count == 2 && lines[1].isEmpty, "not one line: \(execution)", sourceLocation: sourceLocation)
    return try jsonObject(String(lines.first ?? ""), sourceLocation: sourceLocation)
}
