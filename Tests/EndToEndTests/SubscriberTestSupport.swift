import Foundation
@preconcurrency import Glibc
import Testing

// Helpers for SubscriberEndToEndTests only; every name starts with `Subscriber` so they cannot
// collide with the other end-to-end files.

/// The built `countries`: next to the test bundle, else the package's `.build/debug`.
let subscriberBinary: String = {
    let bundle = Bundle.main.bundleURL
    let argumentZero = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for directory in [bundle, bundle.deletingLastPathComponent(), argumentZero] {
        let candidate = directory.appendingPathComponent("countries").path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory),
            !isDirectory.boolValue,
            FileManager.default.isExecutableFile(atPath: candidate)
        {
            return candidate
        }
    }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/debug/countries").path
}()

/// Polls `condition` every 20 ms until it holds or `limit` has passed; returns whether it held.
func subscriberWait(upTo limit: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        usleep(20_000)
    }
}

/// Bytes written by a child, collected off its pipe.
final class SubscriberBuffer: @unchecked Sendable {
    // @unchecked: `data` is only touched under `lock`.
    private let lock = NSLock()
    private var data = Data()
    private var ended = false

    func append(_ more: Data) {
        lock.lock()
        data.append(more)
        lock.unlock()
    }

    /// The writer closed its end and every byte has been read.
    var isClosed: Bool {
        get {
            lock.lock()
            defer { lock.unlock() }
            return ended
        }
        set {
            lock.lock()
            ended = newValue
            lock.unlock()
        }
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    var lines: [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
}

/// One test's world: a temp dir, ipc:// endpoints in it, a db path, and everything it started,
/// stopped by ``stopAll()`` (call it in a `defer`).
final class SubscriberSandbox {
    let directory: String
    let commandEndpoint: String
    let eventsEndpoint: String
    let database: String
    private var processes: [SubscriberProcess] = []
    private var sessions: [String] = []

    init() throws {
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("sub-e2e-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        commandEndpoint = "ipc://\(directory)/command"
        eventsEndpoint = "ipc://\(directory)/events"
        database = "\(directory)/countries.db"
    }

    /// The environment a child gets: UTF-8, the endpoints, nothing else that changes `countries`.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["LC_ALL", "LC_CTYPE"] { environment[key] = nil }
        environment["LANG"] = "C.UTF-8"
        environment["COUNTRIES_COMMAND"] = commandEndpoint
        environment["COUNTRIES_EVENTS"] = eventsEndpoint
        return environment
    }

    /// Starts `countries serve` on the sandbox's endpoints and db (or a new in-memory store),
    /// and waits until it answers.
    @discardableResult
    func startService(inMemory: Bool = false) throws -> SubscriberProcess {
        let service = try launch(
            ["serve"] + (inMemory ? ["--in-memory"] : ["--db", database]) + [
                "--command", commandEndpoint, "--events", eventsEndpoint, "--heartbeat-ms", "100",
            ])
        let ready = subscriberWait(upTo: .seconds(10)) {
            !service.isRunning || run(["list", "--timeout", "200", "--retries", "1"]).status == 0
        }
        guard ready, service.isRunning else {
            throw SubscriberFailure("the service did not start: \(service.standardError.text)")
        }
        return service
    }

    /// Starts `countries ARGS` in the background, stdout and stderr on pipes.
    func launch(_ arguments: [String]) throws -> SubscriberProcess {
        let process = try SubscriberProcess(arguments, environment: environment)
        processes.append(process)
        return process
    }

    /// Runs `countries ARGS` to completion (bounded: SIGKILL after 10 s).
    func run(_ arguments: [String]) -> (status: Int32, output: String, error: String) {
        guard let process = try? SubscriberProcess(arguments, environment: environment) else {
            return (-1, "", "cannot launch")
        }
        if !subscriberWait(upTo: .seconds(10), { !process.isRunning }) { process.stop() }
        process.waitForExit()
        return (process.status, process.standardOutput.text, process.standardError.text)
    }

    /// Opens a detached 100x30 tmux session running `shellCommand` under `sh -c`, in xterm-256color
    /// and UTF-8, with the sandbox's endpoints; the session is killed by ``stopAll()``.
    func tmux(_ shellCommand: String) throws -> SubscriberTmux {
        let name = "subtest-\(UUID().uuidString.prefix(12))"
        let environment =
            "env LANG=C.UTF-8 TERM=xterm-256color COUNTRIES_COMMAND=\(commandEndpoint) COUNTRIES_EVENTS=\(eventsEndpoint)"
        let status = SubscriberTmux.tmux([
            "new-session", "-d", "-s", name, "-x", "100", "-y", "30",
            "\(environment) sh -c '\(shellCommand)'",
        ])
        guard status == 0 else { throw SubscriberFailure("tmux new-session failed with \(status)") }
        sessions.append(name)
        return SubscriberTmux(name: name)
    }

    /// Stops every process (SIGTERM, then SIGKILL) and tmux session, and removes the temp dir.
    /// A session's processes are found by pid first: one stuck on its way out survives
    /// `kill-session`'s SIGHUP, and is then SIGKILLed.
    func stopAll() {
        for process in processes.reversed() { process.stop() }
        var panePids: [Int32] = []
        for session in sessions {
            let shell = SubscriberTmux(name: session).panePid
            panePids += shell.map { [$0] + Self.children(of: $0) } ?? []
            SubscriberTmux.tmux(["kill-session", "-t", session])
        }
        let alive = { panePids.filter { kill($0, 0) == 0 && !Self.isZombie($0) } }
        if !subscriberWait(upTo: .seconds(3), { alive().isEmpty }) {
            for pid in alive() { kill(pid, SIGKILL) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func children(of pid: Int32) -> [Int32] {
        let list = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return list.split(separator: " ").compactMap { Int32($0) }
    }

    private static func isZombie(_ pid: Int32) -> Bool {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // The state follows the parenthesized command name.
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[close...].dropFirst(2).first == "Z"
    }
}

/// A `countries` child process.
final class SubscriberProcess {
    let process = Process()
    let standardOutput = SubscriberBuffer()
    let standardError = SubscriberBuffer()

    init(_ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: subscriberBinary)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        for (pipe, buffer) in [(output, standardOutput), (error, standardError)] {
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil
                    buffer.isClosed = true
                } else {
                    buffer.append(data)
                }
            }
        }
        try process.run()
    }

    var isRunning: Bool { process.isRunning }
    var pid: Int32 { process.processIdentifier }
    var status: Int32 { process.isRunning ? -1 : process.terminationStatus }

    /// Waits (bounded) for the process to end and its pipes to be read to the end.
    func waitForExit() {
        _ = subscriberWait(upTo: .seconds(5)) {
            !process.isRunning && standardOutput.isClosed && standardError.isClosed
        }
    }

    /// Sends `signal` and waits up to `limit` for the process to end; true if it did.
    @discardableResult
    func signal(_ signal: Int32, upTo limit: Duration = .seconds(3)) -> Bool {
        guard process.isRunning else { return true }
        kill(process.processIdentifier, signal)
        return subscriberWait(upTo: limit) { !process.isRunning }
    }

    /// SIGTERM, then SIGKILL after 3 s; true when SIGTERM was enough.
    @discardableResult
    func stop() -> Bool {
        if signal(SIGTERM) { return true }
        signal(SIGKILL)
        return false
    }
}

/// A tmux session: read the screen, type keys.
struct SubscriberTmux {
    let name: String

    /// The visible pane, one string per line.
    func capture() -> String {
        Self.tmuxOutput(["capture-pane", "-p", "-t", name]).output
    }

    /// The pid of the shell the pane runs.
    var panePid: Int32? {
        let output = Self.tmuxOutput(["list-panes", "-t", name, "-F", "#{pane_pid}"]).output
        return Int32(output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Types keys (tmux key names: `j`, `Space`, `q`).
    func send(_ keys: String...) {
        _ = Self.tmux(["send-keys", "-t", name] + keys)
    }

    /// Polls the pane until `condition` holds (up to `limit`); returns the last capture.
    func waitForScreen(upTo limit: Duration = .seconds(5), _ condition: (String) -> Bool) -> (Bool, String) {
        var screen = ""
        let held = subscriberWait(upTo: limit) {
            screen = capture()
            return condition(screen)
        }
        return (held, screen)
    }

    @discardableResult
    static func tmux(_ arguments: [String]) -> Int32 {
        tmuxOutput(arguments, capturing: false).status
    }

    /// Runs `tmux ARGS` and returns its status and stdout.
    ///
    /// Not with Foundation's `Process`: when `new-session` has to start the tmux server (which
    /// forks and daemonizes), `waitUntilExit` was seen to miss the client's exit and hang with
    /// the client left a zombie. A plain posix_spawn and waitpid cannot miss it.
    /// Without `capturing`, stdout goes to /dev/null: a server that `new-session` starts must not
    /// inherit our pipe and hold it open. Bounded: SIGKILL after 10 s.
    static func tmuxOutput(_ arguments: [String], capturing: Bool = true) -> (status: Int32, output: String) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return (-1, "") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if capturing {
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        // An empty signal mask, whatever thread of the test runner spawns it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv = (["tmux"] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "tmux", &actions, &attributes, argv, environ)
        close(fds[1])
        guard spawned == 0 else {
            close(fds[0])
            return (-1, "")
        }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count > 0 {
                output.append(contentsOf: buffer[..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(fds[0])
        var status: Int32 = 0
        let exited = subscriberWait(upTo: .seconds(10)) {
            let result = waitpid(pid, &status, WNOHANG)
            return result == pid || (result < 0 && errno != EINTR)
        }
        if !exited {
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        // Exited normally: the exit code; otherwise -1.
        let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
        return (exitCode, String(decoding: output, as: UTF8.self))
    }

    static var isAvailable: Bool { tmux(["-V"]) == 0 }
}

struct SubscriberFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
