import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

// Scenario helpers for SubscriberEndToEndTests and StoreIdentityEndToEndTests, on the shared
// harness (TestSupport); every name starts with `Subscriber`.

/// A tmux session of the subscriber tests (the shared one).
typealias SubscriberTmux = TmuxSession

/// One test's world: a temp dir, ipc:// endpoints in it, a db path, and everything it started,
/// stopped by ``stopAll()`` (call it in a `defer`).
final class SubscriberSandbox {
    let scratch: ScratchDirectory
    var directory: String { scratch.path }
    let commandEndpoint: String
    let eventsEndpoint: String
    let database: String
    private var processes: [SubscriberProcess] = []
    private var sessions: [TmuxSession] = []

    init() throws {
        scratch = try ScratchDirectory(prefix: "sub")
        commandEndpoint = scratch.ipc("command")
        eventsEndpoint = scratch.ipc("events")
        database = scratch.file("countries.db")
    }

    /// The environment a child gets: UTF-8, the endpoints, nothing else that changes `countries`.
    var environment: [String: String] {
        CountriesBinary.environment(adding: [
            "LANG": "C.UTF-8", "COUNTRIES_COMMAND": commandEndpoint, "COUNTRIES_EVENTS": eventsEndpoint,
        ])
    }

    /// Starts `countries serve` on the sandbox's endpoints and db (or a new in-memory store),
    /// and waits until it answers.
    @discardableResult
    func startService(inMemory: Bool = false) throws -> SubscriberProcess {
        let service = try launch(
            ["serve"] + (inMemory ? ["--in-memory"] : ["--db", database]) + [
                "--command", commandEndpoint, "--events", eventsEndpoint, "--heartbeat-ms", "100",
            ])
        let ready = eventually(within: .seconds(10)) {
            !service.isRunning || run(["list", "--timeout", "200", "--retries", "1"]).status == 0
        }
        guard ready, service.isRunning else {
            throw HarnessFailure("the service did not start: \(service.standardError.text)")
        }
        return service
    }

    /// Starts `countries ARGS` in the background, stdout and stderr on pipes.
    func launch(_ arguments: [String]) throws -> SubscriberProcess {
        let process = SubscriberProcess(try ChildProcess.countries(arguments, environment: environment))
        processes.append(process)
        return process
    }

    /// Runs `countries ARGS` to completion (bounded: SIGKILL after 10 s).
    func run(_ arguments: [String]) -> (status: Int32, output: String, error: String) {
        guard
            let run = try? ChildProcess.countries(arguments, environment: environment).finish(
                timeout: .seconds(10))
        else { return (-1, "", "cannot launch, or ran over 10 s") }
        return (run.exitCode, run.stdout, run.stderr)
    }

    /// Opens a detached 100x30 tmux session running `shellCommand` under `sh -c`, in xterm-256color
    /// and UTF-8, with the sandbox's endpoints; the session is killed by ``stopAll()``.
    func tmux(_ shellCommand: String) throws -> SubscriberTmux {
        let environment =
            "env LANG=C.UTF-8 TERM=xterm-256color COUNTRIES_COMMAND=\(commandEndpoint) COUNTRIES_EVENTS=\(eventsEndpoint)"
        let session = try TmuxSession("\(environment) sh -c '\(shellCommand)'")
        sessions.append(session)
        return session
    }

    /// Stops every process (SIGTERM, then SIGKILL) and tmux session (its processes by pid), and
    /// removes the temp dir.
    func stopAll() {
        for process in processes.reversed() { process.stop() }
        for session in sessions { session.kill() }
        scratch.remove()
    }
}

/// A `countries` child process of the subscriber tests: the shared ``ChildProcess`` with this
/// suite's spelling (Bool results that `#expect` reads).
final class SubscriberProcess {
    let child: ChildProcess

    init(_ child: ChildProcess) { self.child = child }

    var standardOutput: OutputLog { child.stdout }
    var standardError: OutputLog { child.stderr }
    var isRunning: Bool { child.isRunning }
    var pid: Int32 { child.pid }
    /// The exit code, or -1 while it runs.
    var status: Int32 { child.exitStatus ?? -1 }

    /// Waits (bounded) for the process to end and its output to be read to the end.
    func waitForExit() { child.waitForExit(timeout: .seconds(5)) }

    /// Sends `signal` and waits up to `limit` for the process to end; true if it did.
    @discardableResult
    func signal(_ signal: Int32, upTo limit: Duration = .seconds(3)) -> Bool {
        child.signal(signal)
        return child.waitForExit(timeout: limit)
    }

    /// SIGTERM, then SIGKILL after 3 s (times ``testSlowdown``); true when SIGTERM was enough.
    @discardableResult
    func stop() -> Bool {
        guard child.isRunning else { return true }
        return child.stop() != 128 + SIGKILL
    }
}
