import Foundation
@preconcurrency import Glibc
import Testing

// Runs the real `countries` executable, the way a user or a script does: arguments, environment,
// stdout, stderr and an exit code. Nothing here links the executable's code.

/// What a finished `countries` process left behind.
struct Execution: CustomStringConvertible {
    var exitCode: Int32
    var stdout: String
    var stderr: String
    /// Wall-clock time from launch to exit.
    var duration: Duration

    /// Non-empty stdout lines.
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    var description: String {
        "exit \(exitCode) after \(duration)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---"
    }
}

enum EndToEndError: Error, CustomStringConvertible {
    case timedOut(String)
    case notReady(String)

    var description: String {
        switch self {
        case .timedOut(let what): return "timed out: \(what)"
        case .notReady(let what): return "not ready: \(what)"
        }
    }
}

/// Finds and runs the executable.
enum Countries {
    /// The binary under test: `COUNTRIES_BINARY`, else next to the test bundle, else the package's
    /// `.build/debug/countries`.
    static let binary: URL = {
        if let override = ProcessInfo.processInfo.environment["COUNTRIES_BINARY"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let bundle = Bundle.main.bundleURL
        let argumentZero = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [
            bundle, bundle.deletingLastPathComponent(), argumentZero,
            argumentZero.deletingLastPathComponent(),
        ].map { $0.appendingPathComponent("countries") }
        for candidate in candidates where isExecutableFile(candidate.path) {
            return candidate
        }
        return packageRoot.appendingPathComponent(".build/debug/countries")
    }()

    private static func isExecutableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            && !isDirectory.boolValue && FileManager.default.isExecutableFile(atPath: path)
    }

    /// The environment every run starts from: the test's own, without anything that would change
    /// what `countries` does (endpoints, locale), in the C locale so the visited mark is `[x]`.
    static let baseEnvironment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        for key in ["COUNTRIES_COMMAND", "COUNTRIES_EVENTS", "LC_ALL", "LC_CTYPE", "LANG"] {
            environment[key] = nil
        }
        environment["LANG"] = "C"
        return environment
    }()

    /// Runs `countries arguments...` to the end (killed after `timeout`) and returns what it did;
    /// the `AssertExecuteCommand` of this suite.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(15)
    ) throws -> Execution {
        try start(arguments, environment: environment).wait(timeout: timeout)
    }

    /// Starts `countries arguments...` and returns at once.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningProcess {
        try RunningProcess(arguments: arguments, environment: baseEnvironment.merging(environment) { $1 })
    }
}

/// A `countries` process whose stdout and stderr are read to the end on their own threads, so a
/// chatty process never blocks on a full pipe.
final class RunningProcess: @unchecked Sendable {
    let process = Process()
    let arguments: [String]
    private let started = ContinuousClock.now
    private let stdoutReader: PipeReader
    private let stderrReader: PipeReader
    private let exited = DispatchSemaphore(value: 0)

    init(arguments: [String], environment: [String: String]) throws {
        self.arguments = arguments
        process.executableURL = Countries.binary
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        stdoutReader = PipeReader(stdoutPipe.fileHandleForReading)
        stderrReader = PipeReader(stderrPipe.fileHandleForReading)
        try process.run()
        // The parent's copies of the write ends must go, or the readers never see end-of-file.
        try? stdoutPipe.fileHandleForWriting.close()
        try? stderrPipe.fileHandleForWriting.close()
    }

    var pid: pid_t { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// What the process has written to stderr so far.
    var stderrSoFar: String { stderrReader.textSoFar }
    /// What the process has written to stdout so far.
    var stdoutSoFar: String { stdoutReader.textSoFar }

    /// Waits for the exit (SIGKILL after `timeout`, then throws) and for both pipes to close.
    func wait(timeout: Duration) throws -> Execution {
        if !waitForExit(timeout: timeout) {
            if process.isRunning { kill(pid, SIGKILL) }
            _ = waitForExit(timeout: .seconds(5))
            throw EndToEndError.timedOut(
                "countries \(arguments.joined(separator: " ")) ran over \(timeout) and was killed;"
                    + " stdout: \(stdoutReader.textSoFar) stderr: \(stderrReader.textSoFar)")
        }
        let duration = ContinuousClock.now - started
        return Execution(
            exitCode: process.terminationStatus,
            stdout: stdoutReader.waitForEnd(), stderr: stderrReader.waitForEnd(), duration: duration)
    }

    /// True when the process has exited within `timeout`.
    func waitForExit(timeout: Duration) -> Bool {
        if exited.wait(timeout: .now() + timeout.timeInterval) == .timedOut { return false }
        exited.signal()  // keep it signalled for the next wait
        return true
    }

    /// Stops the process: `signal`, then SIGKILL if it has not exited within `grace`.
    func stop(signal: Int32 = SIGTERM, grace: Duration = .seconds(5)) {
        guard process.isRunning else { return }
        kill(pid, signal)
        if !waitForExit(timeout: grace) {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: .seconds(5))
        }
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class PipeReader: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.withLock { data.append(chunk) }
            }
            try? handle.close()
            done.signal()
        }
        thread.start()
    }

    var textSoFar: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    /// The whole output, once the pipe is closed (bounded: a process that left the pipe open to
    /// a child of its own gives what has come so far).
    func waitForEnd() -> String {
        if done.wait(timeout: .now() + 5) == .success { done.signal() }
        return textSoFar
    }
}

extension Duration {
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// A temporary directory of a test's own, removed when the test is done.
final class Sandbox {
    let path: String

    init() throws {
        // Short, since a unix socket path has room for about 100 bytes.
        let name = "ce2e-" + UUID().uuidString.prefix(8).lowercased()
        path = "/tmp/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String { path + "/" + name }

    var commandEndpoint: String { "ipc://" + file("cmd") }
    var eventsEndpoint: String { "ipc://" + file("ev") }

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
        in sandbox: Sandbox, options: [String] = ["--in-memory"], waitUntilReady: Bool = true
    ) throws {
        self.sandbox = sandbox
        process = try Countries.start(
            [
                "serve", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint,
                "--heartbeat-ms", "100",
            ] + options)
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
            if !process.isRunning {
                throw EndToEndError.notReady(
                    "countries serve exited with \(process.process.terminationStatus): \(process.stderrSoFar)"
                )
            }
            let probe = try Countries.run(
                ["count", "--timeout", "200", "--retries", "1"] + sandbox.client, timeout: .seconds(10))
            if probe.exitCode == 0 { return }
        }
        throw EndToEndError.notReady("no answer within \(limit): \(process.stderrSoFar)")
    }

    /// Stops the service and returns how it ended (stderr holds its log).
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Execution? {
        process.stop(signal: signal)
        return try? process.wait(timeout: .seconds(5))
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
