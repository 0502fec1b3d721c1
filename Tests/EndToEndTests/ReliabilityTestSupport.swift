import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

// Helpers of ReliabilityTests, on the shared harness (TestSupport: `countries` processes spawned,
// signalled and reaped by pid; scratch directories; /proc figures): a Lazy Pirate client, and the
// sizes the tests run at (small in `swift test`, larger from scripts/chaos through RELIABILITY_*
// variables).

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

/// A value shared between threads under a lock (the shared one).
typealias ReliabilityBox = Box

// MARK: - Processes

/// A private directory for one test: ipc sockets, the store, process output (the shared one).
typealias ReliabilityScratch = ScratchDirectory

extension ScratchDirectory {
    /// Writes `names` as a text seed file (one per line) called `name`; its path.
    func seedFile(_ name: String, names: [String]) throws -> String {
        let path = file(name)
        try Data((names.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// A `countries` process whose stdout and stderr are appended to files (the shared child
/// process); stopped and reaped by its pid only.
typealias ReliabilityChild = ChildProcess

extension ChildProcess {
    /// Starts `countries arguments...`, stdout and stderr appended to files; without Swift's
    /// backtracer, so a crash test's SIGKILL ends it at once.
    convenience init(_ arguments: [String], stdout: String, stderr: String) throws {
        try self.init(
            CountriesBinary.path, arguments,
            environment: CountriesBinary.environment(adding: ["SWIFT_BACKTRACE": "enable=no"]),
            stdout: .file(stdout), stderr: .file(stderr))
    }
}

/// Figures from /proc (the shared ones).
typealias ReliabilityMemory = ProcessMemory

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

    /// Further `serve` arguments (a `--seed`, say).
    let extraArguments: [String]

    init(
        scratch: ReliabilityScratch, heartbeatMilliseconds: Int = 100, logLevel: String = "warning",
        extraArguments: [String] = []
    ) {
        self.scratch = scratch
        self.extraArguments = extraArguments
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
            ] + extraArguments, stdout: scratch.file("serve.out"), stderr: scratch.file("serve.err"))
        self.child = child
        starts += 1
        let probe = try ReliabilityPirate(endpoint: commandEndpoint)
        defer { probe.close() }
        do {
            _ = try probe.request(
                Data(#"{"op":"status"}"#.utf8), perTry: .milliseconds(300), budget: .seconds(15))
        } catch {
            throw ReliabilityError("the service did not answer within 15 s of starting: \(child.stderr.text)")
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
        guard let path = child.stdout.path, let handle = FileHandle(forReadingAtPath: path) else {
            return nil
        }
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
