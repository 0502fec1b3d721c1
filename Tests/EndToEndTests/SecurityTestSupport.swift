import Foundation
import TestSupport
import Testing
import ZeroMQ

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A failure of the security tests' own harness.
struct SecurityHarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A private temporary directory (short: ipc paths are limited to about 100 bytes); every file a
/// test makes lives here, and `remove()` deletes it.
struct SecurityWorkspace {
    let scratch: ScratchDirectory
    var path: String { scratch.path }

    init() throws { scratch = try ScratchDirectory(prefix: "cse") }

    func remove() { scratch.remove() }

    /// `path/name`, with its directory created.
    func file(_ name: String) throws -> String {
        let full = "\(path)/\(name)"
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return full
    }

    func directory(_ name: String) throws -> String { try scratch.directory(name) }

    func read(_ name: String) -> String { scratch.read(name) }
}

/// A run of the binary in a workspace (the shared child process).
typealias SecurityProcess = ChildProcess

extension ChildProcess {
    /// Starts `countries arguments...` in `workspace`, with only the given COUNTRIES_* variables.
    convenience init(
        _ arguments: [String], in workspace: SecurityWorkspace, environment: [String: String] = [:]
    )
        throws
    {
        try self.init(
            CountriesBinary.path, arguments,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTRIES_") }
                .merging(environment) { $1 },
            directory: workspace.path)
    }
}

/// The outcome of a short client run.
struct SecurityRun {
    var code: Int32?
    var stdout: String
    var stderr: String
    var elapsed: Duration
}

/// Runs `countries arguments...` to completion (killed after `limit`: then `code` is nil).
func securityRun(
    _ arguments: [String], in workspace: SecurityWorkspace, environment: [String: String] = [:],
    limit: Duration = .seconds(10)
) throws -> SecurityRun {
    let start = ContinuousClock.now
    let process = try SecurityProcess(arguments, in: workspace, environment: environment)
    defer { process.stop() }
    let code = process.wait(timeout: limit)
    return SecurityRun(
        code: code, stdout: process.stdout.text, stderr: process.stderr.text,
        elapsed: ContinuousClock.now - start)
}

/// Keys made with `countries keygen` in a workspace: the service's, and clients' under `rw/`,
/// `ro/` and `others/` (the last in no allow-list).
struct SecurityKeys {
    let workspace: SecurityWorkspace

    init(
        _ workspace: SecurityWorkspace, readWrite: [String] = ["alice"], readOnly: [String] = ["bob"],
        others: [String] = ["eve"]
    ) throws {
        self.workspace = workspace
        let names =
            ["server"] + readWrite.map({ "rw/\($0)" }) + readOnly.map({ "ro/\($0)" })
            + others.map({ "others/\($0)" })
        for name in names {
            _ = try workspace.file(name)
            let run = try securityRun(["keygen", name], in: workspace)
            guard run.code == 0 else { throw SecurityHarnessError("keygen \(name) failed: \(run.stderr)") }
        }
        _ = try workspace.directory("rw")
        _ = try workspace.directory("ro")
    }

    /// The client options for a key: `--curve-key DIR/NAME.key --server-key server.pub`.
    func client(_ name: String) -> [String] {
        ["--curve-key", "\(workspace.path)/\(name).key", "--server-key", "\(workspace.path)/server.pub"]
    }

    func certificate(_ name: String) throws -> CurveCertificate {
        try CurveCertificate.parse(workspace.read(name))
    }
}

/// `countries serve` with CURVE (or not) on fresh 127.0.0.1 ports, heartbeats every 100 ms,
/// started and waited for (bounded); `stop()` it in a `defer`.
final class SecurityService {
    let process: SecurityProcess
    let command: String
    let events: String

    init(
        _ workspace: SecurityWorkspace, curve: Bool = true, extra: [String] = [],
        command: String? = nil, events: String? = nil
    ) throws {
        self.command = try command ?? "tcp://127.0.0.1:\(freeTCPPort())"
        self.events = try events ?? "tcp://127.0.0.1:\(freeTCPPort())"
        var arguments = [
            "serve", "--in-memory", "--command", self.command, "--events", self.events, "--heartbeat-ms",
            "100",
        ]
        if curve { arguments += ["--curve-key", "server.key", "--allow", "rw", "--allow-read", "ro"] }
        process = try SecurityProcess(arguments + extra, in: workspace)
        let started = eventually {
            process.stderr.text.contains("serving commands") || !process.isRunning
        }
        guard started, process.isRunning else {
            process.stop()
            throw SecurityHarnessError("serve did not start: \(process.stderr.text)")
        }
    }

    deinit { stop() }

    func stop() { process.stop() }

    var log: String { process.stderr.text }

    /// The client endpoint options.
    var endpoints: [String] { ["--command", command, "--events", events] }

    /// Options for a short-lived client: 300 ms per try, two tries.
    var quickClient: [String] { ["--command", command, "--timeout", "300", "--retries", "2"] }
}

/// A tmux session on a private tmux server (the shared one); `kill()` it in a `defer`.
typealias SecurityTmux = TmuxSession

extension TmuxSession {
    /// Starts `shellCommand` in a detached 100x30 session in `workspace`.
    convenience init(_ shellCommand: String, in workspace: SecurityWorkspace) throws {
        try self.init(shellCommand, directory: workspace.path)
    }
}

/// Shell quoting for a tmux command line.
func securityShellQuote(_ words: [String]) -> String {
    words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
}
