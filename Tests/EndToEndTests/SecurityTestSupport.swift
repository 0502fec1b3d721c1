import Foundation
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

/// The `countries` binary under test: `COUNTRIES_BINARY`, else beside the test bundle, else the
/// package's `.build/debug`.
enum SecurityBinary {
    static let path: String = {
        if let path = ProcessInfo.processInfo.environment["COUNTRIES_BINARY"] { return path }
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../.build/debug"),
        ].map { $0.appendingPathComponent("countries").standardizedFileURL.path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }()
}

/// A private temporary directory (short: ipc paths are limited to about 100 bytes); every file a
/// test makes lives here, and `remove()` deletes it.
struct SecurityWorkspace {
    let path: String

    init() throws {
        path = "/tmp/cse-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// `path/name`, with its directory created.
    func file(_ name: String) throws -> String {
        let full = "\(path)/\(name)"
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return full
    }

    func directory(_ name: String) throws -> String {
        let full = "\(path)/\(name)"
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }

    func read(_ name: String) -> String {
        (try? String(contentsOfFile: "\(path)/\(name)", encoding: .utf8)) ?? ""
    }
}

/// A tcp port on 127.0.0.1 that was free a moment ago: bound with port 0, then released.
func securityFreePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SecurityHarnessError("socket(2) failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else { throw SecurityHarnessError("bind(2) to port 0 failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw SecurityHarnessError("getsockname(2) failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Waits until `condition` holds, checking every 20 ms, for at most `limit`.
func securityEventually(within limit: Duration = .seconds(5), _ condition: () throws -> Bool) rethrows -> Bool
{
    let deadline = ContinuousClock.now + limit
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        Thread.sleep(forTimeInterval: 0.02)
    }
}

/// A run of the binary, its output captured in files (no pipe can fill up and stall it).
final class SecurityProcess {
    let process = Process()
    let label: String
    private let stdoutPath: String
    private let stderrPath: String

    /// Starts `countries arguments...` in `workspace`, with only the given COUNTRIES_* variables.
    init(_ arguments: [String], in workspace: SecurityWorkspace, environment: [String: String] = [:]) throws {
        label = "p\(UUID().uuidString.prefix(6))"
        stdoutPath = "\(workspace.path)/\(label).out"
        stderrPath = "\(workspace.path)/\(label).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: SecurityBinary.path)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: workspace.path)
        var inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTRIES_") }
        inherited.merge(environment) { $1 }
        process.environment = inherited
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try process.run()
    }

    deinit { stop() }

    var pid: Int32 { process.processIdentifier }
    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// The exit status once it exits within `limit`; nil if it is still running then.
    func exitCode(within limit: Duration) -> Int32? {
        _ = securityEventually(within: limit) { !process.isRunning }
        guard !process.isRunning else { return nil }
        return process.terminationStatus
    }

    func signal(_ number: Int32) {
        if process.isRunning { kill(pid, number) }
    }

    /// SIGTERM, then SIGKILL if it has not exited within two seconds; waits for the exit.
    func stop() {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        if exitCode(within: .seconds(2)) == nil {
            kill(pid, SIGKILL)
            _ = exitCode(within: .seconds(2))
        }
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
    let code = process.exitCode(within: limit)
    return SecurityRun(
        code: code, stdout: process.stdout, stderr: process.stderr, elapsed: ContinuousClock.now - start)
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
        self.command = try command ?? "tcp://127.0.0.1:\(securityFreePort())"
        self.events = try events ?? "tcp://127.0.0.1:\(securityFreePort())"
        var arguments = [
            "serve", "--in-memory", "--command", self.command, "--events", self.events, "--heartbeat-ms",
            "100",
        ]
        if curve { arguments += ["--curve-key", "server.key", "--allow", "rw", "--allow-read", "ro"] }
        process = try SecurityProcess(arguments + extra, in: workspace)
        let started = securityEventually {
            process.stderr.contains("serving commands") || !process.process.isRunning
        }
        guard started, process.process.isRunning else {
            process.stop()
            throw SecurityHarnessError("serve did not start: \(process.stderr)")
        }
    }

    deinit { stop() }

    func stop() { process.stop() }

    var log: String { process.stderr }

    /// The client endpoint options.
    var endpoints: [String] { ["--command", command, "--events", events] }

    /// Options for a short-lived client: 300 ms per try, two tries.
    var quickClient: [String] { ["--command", command, "--timeout", "300", "--retries", "2"] }
}

/// A tmux session on a private tmux server (its own socket), both named uniquely; `kill()` it
/// in a `defer`. tmux runs through posix_spawn and waitpid, not Foundation's Process: `tmux
/// new-session` leaves a daemon behind, and Process's `waitUntilExit` can then wait forever.
final class SecurityTmux {
    let socketName = "countries-sec-\(UUID().uuidString.prefix(8))"
    let session = "sec-\(UUID().uuidString.prefix(8))"
    private let scratch: String
    /// The pane's process (the command), stopped by pid when the session is killed.
    private var panePID: Int32?

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

    /// Starts `shellCommand` in a detached 100x30 session.
    init(_ shellCommand: String, in workspace: SecurityWorkspace) throws {
        scratch = "\(workspace.path)/\(session).capture"
        let status = tmux([
            "new-session", "-d", "-s", session, "-x", "100", "-y", "30", "-c", workspace.path, shellCommand,
        ])
        guard status == 0 else { throw SecurityHarnessError("tmux new-session failed (\(status))") }
        if tmux(["display-message", "-p", "-t", session, "#{pane_pid}"], output: scratch) == 0 {
            panePID = Int32(
                ((try? String(contentsOfFile: scratch, encoding: .utf8)) ?? "").trimmingCharacters(
                    in: .whitespacesAndNewlines))
        }
    }

    deinit { kill() }

    /// The visible pane text.
    func capture() -> String {
        guard tmux(["capture-pane", "-p", "-t", session], output: scratch) == 0 else { return "" }
        return (try? String(contentsOfFile: scratch, encoding: .utf8)) ?? ""
    }

    /// Kills the session by name, stops its command by pid, then this private server.
    func kill() {
        tmux(["kill-session", "-t", session])
        if let pid = panePID {
            panePID = nil
            if Glibc.kill(pid, 0) == 0 {
                Glibc.kill(pid, SIGTERM)
                if !securityEventually(within: .seconds(2), { Glibc.kill(pid, 0) != 0 }) {
                    Glibc.kill(pid, SIGKILL)
                }
            }
        }
        tmux(["kill-server"])
    }

    /// Runs tmux on the private socket, its stdout to `output` (or /dev/null), for at most 5 s.
    @discardableResult
    private func tmux(_ arguments: [String], output: String = "/dev/null") -> Int32 {
        securitySpawnAndWait(["/usr/bin/tmux", "-L", socketName] + arguments, output: output)
    }
}

/// Runs a program with posix_spawn (stdin and stderr /dev/null, stdout to `output`) and waits
/// at most `limit` for it; its exit status, or -1 (killed) when it took longer.
func securitySpawnAndWait(_ argv: [String], output: String, limit: Duration = .seconds(5)) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // Hand down no blocked signals (the test process blocks some on its threads).
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    var cArguments = argv.map { strdup($0) } + [nil]
    defer { for argument in cArguments { free(argument) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, environ) == 0 else { return -1 }
    var status: Int32 = 0
    let deadline = ContinuousClock.now + limit
    while waitpid(pid, &status, WNOHANG) == 0 {
        if ContinuousClock.now >= deadline {
            Glibc.kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            return -1
        }
        Thread.sleep(forTimeInterval: 0.01)
    }
    // WIFEXITED / WEXITSTATUS, spelled out (the C macros are not imported).
    return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
}

/// Shell quoting for a tmux command line.
func securityShellQuote(_ words: [String]) -> String {
    words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
}
