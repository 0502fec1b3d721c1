import CountriesClient
import CountriesCore
import Foundation
@preconcurrency import Glibc
import Testing
import ZeroMQ

/// A real `countries serve --in-memory` for the integration tests over sockets: its own temp
/// dir, ipc:// endpoints, a 100 ms heartbeat. Call ``stop()`` in a `defer`.
final class LiveTestService {
    let directory: URL
    let commandEndpoint: String
    let eventsEndpoint: String
    private let process: Process

    /// The built `countries`: next to the test bundle, else the package's `.build/debug`.
    static let binary: URL = {
        let bundle = Bundle.main.bundleURL
        let argumentZero = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [bundle, bundle.deletingLastPathComponent(), argumentZero] {
            let candidate = directory.appendingPathComponent("countries")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/countries")
    }()

    /// Starts the service and waits (bounded) until it answers `list`.
    static func start() throws -> LiveTestService {
        let service = try LiveTestService()
        do {
            try service.waitUntilReady()
        } catch {
            service.stop()
            throw error
        }
        return service
    }

    private init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("live-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        commandEndpoint = "ipc://\(directory.path)/command"
        eventsEndpoint = "ipc://\(directory.path)/events"
        process = Process()
        process.executableURL = Self.binary
        process.arguments = [
            "serve", "--in-memory", "--command", commandEndpoint, "--events", eventsEndpoint,
            "--heartbeat-ms", "100", "--log-level", "warning",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let log = directory.appendingPathComponent("serve.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
    }

    private func waitUntilReady() throws {
        let context = try Context()
        let client = CommandClient(
            context: context, endpoint: commandEndpoint, timeout: .milliseconds(200), tries: 1)
        let ready = liveWait(upTo: .seconds(10)) {
            guard process.isRunning else { return true }
            return (try? client.send(.query(.list)))?.ok == true
        }
        guard ready, process.isRunning else {
            throw LiveTestFailure("the service did not answer `list` within 10 s")
        }
    }

    /// The service's `list`, asked on a fresh client.
    func list() throws -> Reply {
        let context = try Context()
        let client = CommandClient(
            context: context, endpoint: commandEndpoint, timeout: .seconds(2), tries: 3)
        return try client.send(.query(.list))
    }

    /// SIGTERM, then SIGKILL if it is still running after 3 s; removes the temp dir. Records an
    /// issue when SIGTERM was not enough: the service must stop cleanly on it.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            if !liveWait(upTo: .seconds(3), { !process.isRunning }) {
                kill(process.processIdentifier, SIGKILL)
                _ = liveWait(upTo: .seconds(3)) { !process.isRunning }
                Issue.record("the service did not stop within 3 s of SIGTERM")
            }
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

struct LiveTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` every 10 ms until it holds or `limit` has passed; returns whether it held.
func liveWait(upTo limit: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        usleep(10_000)
    }
}
