import CountriesClient
import CountriesCore
import Foundation
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesService
@testable import CountriesSockets

/// How long any single wait in these tests may take: generous, for a loaded 2-core machine.
/// Nothing waits this long when the code works. `testSlowdown` (`COUNTRIES_TEST_SLOWDOWN`, which
/// `scripts/test --sanitize` sets) multiplies it, since sanitized code runs several times slower.
let patience: Duration = .seconds(5) * testSlowdown

/// ``patience`` in milliseconds, for socket options.
let patienceMilliseconds = Int32(patience / .milliseconds(1))

/// A failure of the test harness itself.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Tells a service to stop: a plain pipe(2), readable once a byte is written.
final class PipeStopSource: StopSource, Sendable {
    let fileDescriptor: Int32
    private let writeEnd: Int32

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw HarnessError("pipe(2) failed with errno \(errno)") }
        fileDescriptor = fds[0]
        writeEnd = fds[1]
        _ = fcntl(fileDescriptor, F_SETFL, fcntl(fileDescriptor, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(fileDescriptor)
        close(writeEnd)
    }

    /// Asks the service to stop.
    func stop() {
        var byte: UInt8 = 42
        _ = write(writeEnd, &byte, 1)
    }

    /// Delivers `reason` (a signal number, such as SIGHUP) as the signal pipe would.
    func signal(_ reason: Int32) {
        var byte = UInt8(truncatingIfNeeded: reason)
        _ = write(writeEnd, &byte, 1)
    }

    func drain() -> [Int32] {
        var reasons: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 16)
        while true {
            let count = read(fileDescriptor, &buffer, buffer.count)
            guard count > 0 else { return reasons }
            reasons += buffer[..<count].map { Int32($0) }
        }
    }
}

/// One event off the PUB socket: its topic frame and its body.
struct Published: Equatable {
    var topic: String
    var body: Data

    /// The body as an event (throws for a heartbeat or a malformed body).
    func event() throws -> Event { try Event.decode(body) }
}

/// A reply as bytes, decoded, and as a plain JSON object (to check the wire field names).
struct RawReply {
    var bytes: Data
    var reply: Reply
    var object: [String: Any]

    init(_ bytes: Data) throws {
        self.bytes = bytes
        reply = try Reply.decode(bytes)
        guard let object = try JSONSerialization.jsonObject(with: bytes) as? [String: Any] else {
            throw HarnessError("the reply is not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
        }
        self.object = object
    }

    /// The error code of a refusal.
    var code: String? { reply.error?.code }
    /// The error message of a refusal ("" when there is none).
    var message: String { reply.error?.message ?? "" }
}

/// A state service on its own thread, on ipc endpoints and a store in a private temporary
/// directory; the test talks to it only over its sockets.
///
/// Use: `let service = try ServiceHarness(); defer { service.shutdown() }`.
final class ServiceHarness {
    /// The private directory: the ipc sockets and the store live here.
    let directory: String
    /// The configuration the service is (re)started with; change it before ``restart(seed:)``.
    var configuration: ServiceConfiguration
    /// The context for the test's own sockets.
    let context: Context
    /// Every line the service logged (warnings and errors).
    let log = Box<[String]>([])

    private var running: Running?

    private struct Running {
        let stop: PipeStopSource
        let started: DispatchSemaphore
        let done: DispatchSemaphore
        let startError: Box<ServiceError?>
        let runError: Box<ServiceError?>
    }

    /// Starts a service with `seed` (the standard eight by default) on a SQLite file in a fresh
    /// temporary directory, or in memory; heartbeats every 50 ms.
    init(
        seed: [Country] = SeedList.standard, inMemory: Bool = false,
        configure: (inout ServiceConfiguration) -> Void = { _ in }
    ) throws {
        // Short: ipc paths are limited to about 100 bytes.
        directory = "/tmp/cst-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = ServiceConfiguration()
        configuration.commandEndpoint = "ipc://\(directory)/commands"
        configuration.eventsEndpoint = "ipc://\(directory)/events"
        configuration.storePath = inMemory ? nil : "\(directory)/countries.db"
        configuration.seed = seed
        configuration.heartbeatInterval = .milliseconds(50)
        configuration.version = "9.8.7-test"
        configuration.lingerOnShutdown = .milliseconds(200)
        configure(&configuration)
        self.configuration = configuration
        context = try Context()
        do {
            try start()
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    deinit {
        shutdown()
    }

    var commandEndpoint: String { configuration.commandEndpoint }
    var eventsEndpoint: String { configuration.eventsEndpoint }
    /// The store file (meaningless for an in-memory service).
    var storePath: String { configuration.storePath ?? ":memory:" }
    var isRunning: Bool { running != nil }

    /// Starts the service thread and waits (bounded) until its sockets are bound; with a
    /// `delay`, returns at once and the service binds after it (see ``waitUntilStarted()``).
    func start(after delay: Duration = .zero) throws {
        guard running == nil else { throw HarnessError("the service is already running") }
        let stop = try PipeStopSource()
        let started = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let startError = Box<ServiceError?>(nil)
        let runError = Box<ServiceError?>(nil)
        let configuration = self.configuration
        let log = self.log
        let logger = Logger(level: .warning) { line in log.value.append(line) }
        let thread = Thread {
            defer { done.signal() }
            if delay > .zero {
                // The point of a delayed start is the delay: a client is kept waiting meanwhile.
                Thread.sleep(forTimeInterval: Double(delay / .milliseconds(1)) / 1000)
            }
            let service: StateService
            do throws(ServiceError) {
                service = try StateService(configuration: configuration, logger: logger)
            } catch {
                startError.value = error
                started.signal()
                return
            }
            started.signal()
            do throws(ServiceError) {
                try service.run(stopOn: stop)
            } catch {
                runError.value = error
            }
        }
        thread.start()
        running = Running(
            stop: stop, started: started, done: done, startError: startError, runError: runError)
        if delay == .zero { try waitUntilStarted() }
    }

    /// Waits (bounded) until the service has bound its sockets, or throws why it could not.
    func waitUntilStarted() throws {
        guard let running else { throw HarnessError("the service is not running") }
        guard running.started.wait(timeout: .now() + (.seconds(10) * testSlowdown).timeInterval) == .success
        else {
            throw HarnessError("the service did not start within 10 s")
        }
        running.started.signal()  // Later calls return at once.
        if let error = running.startError.value {
            self.running = nil
            _ = running.done.wait(timeout: .now() + (.seconds(10) * testSlowdown).timeInterval)
            throw error
        }
    }

    /// Stops the service and waits (bounded) for its thread to finish.
    func stop() throws {
        guard let running else { return }
        self.running = nil
        running.stop.stop()
        guard running.done.wait(timeout: .now() + (.seconds(10) * testSlowdown).timeInterval) == .success
        else {
            throw HarnessError("the service did not stop within 10 s of being told to")
        }
        if let error = running.startError.value ?? running.runError.value { throw error }
    }

    /// Stops and starts again on the same store, with another seed if given.
    func restart(seed: [Country]? = nil) throws {
        try stop()
        if let seed { configuration.seed = seed }
        try start()
    }

    /// Stops the service if it runs and removes the directory; for `defer`, never throws.
    func shutdown() {
        do {
            try stop()
        } catch {
            Issue.record("stopping the service: \(error)")
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Clients

    /// A command client of the service (one try by default, so retries hide nothing).
    func client(timeout: Duration = patience, tries: Int = 1) -> CommandClient {
        CommandClient(context: context, endpoint: commandEndpoint, timeout: timeout, tries: tries)
    }

    /// A socket of `type` connected to the command endpoint whose blocking calls give up after
    /// ``patience``.
    func commandSocket(_ type: SocketType) throws -> Socket {
        let socket = try context.makeSocket(type)
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, patienceMilliseconds)
        try socket.setOption(.sendTimeout, patienceMilliseconds)
        try socket.connect(commandEndpoint)
        return socket
    }

    /// A SUB socket subscribed to everything that has already received a heartbeat, so no event
    /// published from now on is lost to the slow-joiner race.
    func subscriber() throws -> Socket {
        let socket = try context.makeSocket(.sub)
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, 100)
        try socket.subscribe("")
        try socket.connect(eventsEndpoint)
        let deadline = ContinuousClock.now + patience
        while ContinuousClock.now < deadline {
            if let frames = try socket.receive(), frames.first == Data(Topic.heartbeat.rawValue.utf8) {
                return socket
            }
        }
        throw HarnessError("no heartbeat arrived on \(eventsEndpoint) within \(patience)")
    }

    // MARK: Requests

    /// Sends one frame on a fresh REQ socket and returns the reply frame.
    func rawRequest(_ frames: [Data]) throws -> Data {
        let socket = try commandSocket(.req)
        guard try socket.send(frames) else { throw HarnessError("could not send the request") }
        guard let reply = try socket.receive() else {
            throw HarnessError(
                "no reply within \(patience) to \(frames.map { String(decoding: $0, as: UTF8.self) })")
        }
        guard reply.count == 1, let body = reply.first else {
            throw HarnessError("the reply has \(reply.count) frames")
        }
        return body
    }

    /// Sends a JSON text as one frame on a plain REQ socket.
    func request(_ json: String) throws -> RawReply {
        try RawReply(rawRequest([Data(json.utf8)]))
    }

    /// Sends a request on a plain REQ socket.
    func request(_ request: Request) throws -> RawReply {
        try RawReply(rawRequest([request.encoded()]))
    }

    /// Sends a command (without an id) on a plain REQ socket.
    func request(_ command: Command) throws -> RawReply {
        try request(Request(command: command))
    }

    /// The current list and seq, read with `list`.
    func snapshot() throws -> CountriesState {
        let list = try request(.query(.list)).reply
        guard list.ok, let rows = list.countries, let seq = list.seq else {
            throw HarnessError("list failed: \(list)")
        }
        return CountriesState(rows: rows, seq: seq)
    }
}

// MARK: - Events

/// The next message on `socket` that is not a heartbeat, or nil when none comes within `limit`.
func nextEvent(_ socket: Socket, within limit: Duration = patience) throws -> Published? {
    try nextMessage(socket, within: limit) { $0 != Topic.heartbeat.rawValue }
}

/// The next heartbeat on `socket`, or nil when none comes within `limit`.
func nextHeartbeat(_ socket: Socket, within limit: Duration = patience) throws -> Heartbeat? {
    try nextMessage(socket, within: limit) { $0 == Topic.heartbeat.rawValue }.map {
        try Heartbeat.decode($0.body)
    }
}

private func nextMessage(_ socket: Socket, within limit: Duration, where wanted: (String) -> Bool) throws
    -> Published?
{
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        guard let frames = try socket.receive() else { continue }
        guard frames.count == 2 else {
            throw HarnessError("a published message has \(frames.count) frames, not 2")
        }
        let topic = String(decoding: frames[0], as: UTF8.self)
        if wanted(topic) { return Published(topic: topic, body: frames[1]) }
    }
    return nil
}

// MARK: - Seeds

/// A seed of `count` made-up countries, none visited.
func syntheticSeed(_ count: Int) -> [Country] {
    (0..<count).map { Country(name: "Country \($0)") }
}

/// A fresh request id.
func freshID() -> String { RequestID.make() }

extension Logger {
    /// A logger collecting its lines, for tests that read what was logged.
    static func collecting(_ level: LogLevel, _ format: LogFormat = .text) -> (Logger, Locked<[String]>) {
        let lines = Locked<[String]>([])
        return (Logger(level: level, format: format) { line in lines.withLock { $0.append(line) } }, lines)
    }
}
