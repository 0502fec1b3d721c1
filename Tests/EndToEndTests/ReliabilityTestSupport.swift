import CountriesCore
import Foundation
@preconcurrency import Glibc
import Testing
import ZeroMQ

// Helpers of ReliabilityTests: real `countries` processes (spawned, signalled and reaped by pid),
// Lazy Pirate and pipelined DEALER clients, resident memory from /proc, and the sizes the tests
// run at (small in `swift test`, larger from scripts/chaos through RELIABILITY_* variables).

/// A failure of the reliability harness itself (a process that would not start, a timeout).
struct ReliabilityError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The sizes a run uses: the CI defaults, or the `RELIABILITY_*` environment variables that
/// scripts/chaos sets.
enum ReliabilitySizes {
    static func value(_ name: String, default fallback: Int) -> Int {
        guard let text = ProcessInfo.processInfo.environment[name], let value = Int(text), value >= 0 else {
            return fallback
        }
        return value
    }

    /// Whether the strict bounds apply (scripts/chaos on a quiet machine), not CI's looser ones.
    static var strict: Bool { ProcessInfo.processInfo.environment["RELIABILITY_STRICT"] == "1" }

    /// A figure for the log: `reliability: name value`, so scripts/chaos can collect them.
    static func report(_ line: String) {
        print("reliability: \(line)")
    }
}

/// A value shared between threads under a lock.
final class ReliabilityBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&stored) }
    }
}

// MARK: - Processes

/// The `countries` executable under test.
enum ReliabilityBinary {
    /// `COUNTRIES_BINARY`, else the one next to the test bundle, else `.build/debug/countries`.
    static let path: String = {
        if let override = ProcessInfo.processInfo.environment["COUNTRIES_BINARY"], !override.isEmpty {
            return override
        }
        let bundle = Bundle.main.bundleURL
        let argumentZero = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [
            bundle, bundle.deletingLastPathComponent(), argumentZero,
            argumentZero.deletingLastPathComponent(),
        ] {
            let candidate = directory.appendingPathComponent("countries").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/countries").path
    }()
}

/// A private directory for one test: ipc sockets, the store, process output. Short, since ipc
/// paths are limited to about 100 bytes.
final class ReliabilityScratch {
    let path: String

    init() throws {
        path = "/tmp/rel-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A child process started with posix_spawn, its stdout and stderr appended to files; stopped
/// and reaped by its pid only.
final class ReliabilityChild {
    let pid: pid_t
    let arguments: [String]
    let stdoutPath: String
    let stderrPath: String
    private(set) var exitStatus: Int32?

    init(_ arguments: [String], stdout stdoutPath: String, stderr stderrPath: String) throws {
        self.arguments = arguments
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var environment = ProcessInfo.processInfo.environment
        for key in ["COUNTRIES_COMMAND", "COUNTRIES_EVENTS", "LC_ALL", "LC_CTYPE"] { environment[key] = nil }
        environment["LANG"] = "C"
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let argv = ([ReliabilityBinary.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, ReliabilityBinary.path, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw ReliabilityError(
                "cannot start \(ReliabilityBinary.path): \(String(cString: strerror(result)))")
        }
        self.pid = pid
    }

    /// Sends `signal` if the process has not been reaped yet.
    func signal(_ signal: Int32) {
        guard exitStatus == nil else { return }
        kill(pid, signal)
    }

    /// Reaps the process if it has exited within `timeout`; true when it has.
    @discardableResult
    func waitForExit(timeout: Duration) -> Bool {
        if exitStatus != nil { return true }
        let deadline = ContinuousClock.now + timeout
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result < 0 && errno == ECHILD) {
                exitStatus = status
                return true
            }
            if ContinuousClock.now >= deadline { return false }
            usleep(5_000)
        }
    }

    /// SIGKILL and reap: the crash.
    func crash() {
        signal(SIGKILL)
        waitForExit(timeout: .seconds(10))
    }

    /// SIGCONT (in case it is stopped), SIGTERM, then SIGKILL after `grace`; always reaps.
    func stop(grace: Duration = .seconds(3)) {
        guard exitStatus == nil else { return }
        signal(SIGCONT)
        signal(SIGTERM)
        if !waitForExit(timeout: grace) { crash() }
    }

    var stderrText: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Resident memory in KiB (`VmRSS` in /proc/PID/status), nil once the process is gone.
    var residentKilobytes: Int? { ReliabilityMemory.residentKilobytes(of: pid) }
}

enum ReliabilityMemory {
    /// CPU time `pid` has used (user + system), from /proc/PID/stat, in clock ticks (1/100 s).
    static func cpuTicks(of pid: pid_t) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": state is field 3, utime field 14, stime field 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// `VmRSS` of `pid` in KiB.
    static func residentKilobytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return nil
        }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}

/// `countries serve` on ipc endpoints and a store in a scratch directory; killed and restarted
/// on the same store at will.
final class ReliabilityService {
    let scratch: ReliabilityScratch
    let commandEndpoint: String
    let eventsEndpoint: String
    let storePath: String
    let heartbeatMilliseconds: Int
    let logLevel: String
    private(set) var child: ReliabilityChild?
    /// How many times it has been started.
    private(set) var starts = 0

    init(scratch: ReliabilityScratch, heartbeatMilliseconds: Int = 100, logLevel: String = "warning") {
        self.scratch = scratch
        commandEndpoint = "ipc://\(scratch.file("cmd"))"
        eventsEndpoint = "ipc://\(scratch.file("evt"))"
        storePath = scratch.file("countries.db")
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.logLevel = logLevel
    }

    var pid: pid_t? { child?.pid }

    /// Starts the service and waits (bounded) until it answers `status`.
    func start() throws {
        guard child == nil else { throw ReliabilityError("the service is already running") }
        let child = try ReliabilityChild(
            [
                "serve", "--command", commandEndpoint, "--events", eventsEndpoint, "--db", storePath,
                "--heartbeat-ms", "\(heartbeatMilliseconds)", "--log-level", logLevel,
            ], stdout: scratch.file("serve.out"), stderr: scratch.file("serve.err"))
        self.child = child
        starts += 1
        let probe = try ReliabilityPirate(endpoint: commandEndpoint)
        defer { probe.close() }
        do {
            _ = try probe.request(
                Data(#"{"op":"status"}"#.utf8), perTry: .milliseconds(300), budget: .seconds(15))
        } catch {
            throw ReliabilityError("the service did not answer within 15 s of starting: \(child.stderrText)")
        }
    }

    /// SIGKILL at this moment, reaped.
    func crash() {
        child?.crash()
        child = nil
    }

    /// A clean stop (SIGTERM, SIGKILL after a grace period); for `defer`.
    func stop() {
        child?.stop()
        child = nil
    }

    /// The arguments that point a client command at this service.
    var clientArguments: [String] { ["--command", commandEndpoint, "--events", eventsEndpoint] }
}

// MARK: - Clients

/// A Lazy Pirate client: one REQ socket in its own context; on a timeout the socket is closed
/// and a new one sends the same bytes (same request id) again, until a reply or the budget ends.
final class ReliabilityPirate {
    let endpoint: String
    private let context: Context
    private var socket: Socket?
    /// Tries beyond the first, over the client's life.
    private(set) var retries = 0

    init(endpoint: String) throws {
        self.endpoint = endpoint
        context = try Context()
    }

    /// Sends `body` until a reply comes; returns the reply frame.
    func request(_ body: Data, perTry: Duration, budget: Duration) throws -> Data {
        let deadline = ContinuousClock.now + budget
        var first = true
        while ContinuousClock.now < deadline {
            if !first { retries += 1 }
            first = false
            let socket = try connected()
            guard try socket.send([body], dontWait: true) else {
                discard()
                usleep(10_000)
                continue
            }
            var poller = Poller()
            let item = poller.add(socket)
            let tryDeadline = min(deadline, ContinuousClock.now + perTry)
            while ContinuousClock.now < tryDeadline {
                let remaining = Int((tryDeadline - ContinuousClock.now) / .milliseconds(1)) + 1
                let ready = try poller.poll(timeoutMilliseconds: remaining)
                if ready.isReadable(item), let frames = try socket.receive(dontWait: true),
                    let reply = frames.last
                {
                    return reply
                }
            }
            discard()  // REQ cannot send again before a reply: a new socket
        }
        throw ReliabilityError("no reply from \(endpoint) within \(budget)")
    }

    /// `request` for a reply decoded as protocol JSON.
    func reply(_ json: String, perTry: Duration = .seconds(1), budget: Duration = .seconds(30)) throws
        -> Reply
    {
        try Reply.decode(request(Data(json.utf8), perTry: perTry, budget: budget))
    }

    /// The service's list as a state.
    func snapshot() throws -> CountriesState {
        let reply = try reply(#"{"op":"list"}"#)
        guard reply.ok, let rows = reply.countries, let seq = reply.seq else {
            throw ReliabilityError("list failed: \(reply)")
        }
        return CountriesState(rows: rows, seq: seq)
    }

    private func connected() throws -> Socket {
        if let socket { return socket }
        let fresh = try context.makeSocket(.req)
        try fresh.setOption(.linger, 0)
        try fresh.connect(endpoint)
        socket = fresh
        return fresh
    }

    private func discard() {
        socket?.close()
        socket = nil
    }

    func close() {
        discard()
        context.terminate()
    }
}

/// Runs `body` on `count` threads and waits (bounded) for all of them.
func reliabilityConcurrently(_ count: Int, timeout: Duration, _ body: @escaping @Sendable (Int) -> Void)
    throws
{
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    guard group.wait(timeout: .now() + timeout.timeInterval) == .success else {
        throw ReliabilityError("\(count) client threads did not finish within \(timeout)")
    }
}

extension Duration {
    var milliseconds: Int { Int(self / .milliseconds(1)) }
}

/// A pipelined toggler: a DEALER socket keeping `window` toggles in flight until `stopAt`;
/// returns how many were answered, how many of those were errors, and the longest wait between
/// two replies (a service that stalls shows there, whatever the machine's load).
func reliabilityFlood(
    endpoint: String, window: Int, countries: Int, stopAt: ReliabilityBox<ContinuousClock.Instant>,
    answered: ReliabilityBox<Int>, client: Int
) -> (ok: Int, failed: Int, longestGap: Duration, error: String?) {
    // Fresh ids every flood: a reused id would be answered from memory, not applied.
    let run = UUID().uuidString.prefix(8)
    var ok = 0
    var failed = 0
    var longestGap = Duration.zero
    do {
        let context = try Context()
        defer { context.terminate() }
        let socket = try context.makeSocket(.dealer)
        defer { socket.close() }
        try socket.setOption(.linger, 0)
        try socket.connect(endpoint)
        var inFlight = 0
        var sent = 0
        var poller = Poller()
        let item = poller.add(socket)
        var lastReply = ContinuousClock.now
        while true {
            let stopping = ContinuousClock.now >= stopAt.value
            if stopping && inFlight == 0 { break }
            while !stopping && inFlight < window {
                let body = #"{"op":"toggle","index":\#(sent % countries),"id":"\#(run)-\#(client)-\#(sent)"}"#
                guard try socket.send([Data(body.utf8)], dontWait: true) else { break }
                sent += 1
                inFlight += 1
            }
            let ready = try poller.poll(timeoutMilliseconds: 100)
            if ready.isReadable(item) {
                while let frames = try socket.receive(dontWait: true) {
                    inFlight -= 1
                    longestGap = max(longestGap, ContinuousClock.now - lastReply)
                    lastReply = ContinuousClock.now
                    if let body = frames.last, let reply = try? Reply.decode(body), reply.ok {
                        ok += 1
                        answered.update { $0 += 1 }
                    } else {
                        failed += 1
                    }
                }
            }
            if ContinuousClock.now - lastReply > .seconds(20) {
                return (ok, failed, longestGap, "no reply for 20 s with \(inFlight) toggles in flight")
            }
        }
    } catch {
        return (ok, failed, longestGap, "\(error)")
    }
    return (ok, failed, longestGap, nil)
}

// MARK: - Subscribers

/// `countries watch --json`: one line per state, `{"countries": [...], "seq": S}`.
final class ReliabilityWatcher {
    let child: ReliabilityChild
    let name: String

    init(_ name: String, service: ReliabilityService) throws {
        self.name = name
        child = try ReliabilityChild(
            ["watch", "--json", "--heartbeat-ms", "\(service.heartbeatMilliseconds)", "--timeout", "500"]
                + service.clientArguments,
            stdout: service.scratch.file("\(name).out"), stderr: service.scratch.file("\(name).err"))
    }

    private struct Line: Decodable {
        var countries: [Row]
        var seq: UInt64
    }

    private struct Row: Decodable {
        var index: Int
        var name: String
        var visited: Bool
    }

    /// The last complete state the watcher printed.
    var latest: CountriesState? {
        guard let handle = FileHandle(forReadingAtPath: child.stdoutPath) else { return nil }
        defer { try? handle.close() }
        // The last line fits in the tail: a state of a few rows is a few hundred bytes.
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 65_536 ? size - 65_536 : 0)
        let tail = handle.readDataToEndOfFile()
        let lines = tail.split(separator: UInt8(ascii: "\n"))
        // The final line may still be being written when it has no newline yet.
        let complete = tail.last == UInt8(ascii: "\n") ? lines : lines.dropLast()
        guard let last = complete.last, let line = try? JSONDecoder().decode(Line.self, from: Data(last))
        else {
            return nil
        }
        let rows = line.countries.map { IndexedCountry(index: $0.index, name: $0.name, visited: $0.visited) }
        return CountriesState(rows: rows, seq: line.seq)
    }

    /// Waits (bounded) until the watcher shows `expected`; returns how long it took, nil if never.
    func waitUntilShowing(_ expected: CountriesState, within limit: Duration) -> Duration? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if latest == expected { return ContinuousClock.now - start }
            usleep(20_000)
        }
        return latest == expected ? ContinuousClock.now - start : nil
    }

    func stop() { child.stop() }
}
