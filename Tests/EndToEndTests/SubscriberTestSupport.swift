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

    /// Starts `countries serve` on the sandbox's endpoints and db, and waits until it answers.
    @discardableResult
    func startService() throws -> SubscriberProcess {
        let service = try launch([
            "serve", "--db", database, "--command", commandEndpoint, "--events", eventsEndpoint,
            "--heartbeat-ms", "100",
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
    func stopAll() {
        for process in processes.reversed() { process.stop() }
        for session in sessions { _ = SubscriberTmux.tmux(["kill-session", "-t", session]) }
        try? FileManager.default.removeItem(atPath: directory)
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
        let pipe = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tmux", "capture-pane", "-p", "-t", name]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tmux"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    static var isAvailable: Bool { tmux(["-V"]) == 0 }
}

struct SubscriberFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
