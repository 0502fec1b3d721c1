import CountriesClient
import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// A real `countries serve --in-memory` for the integration tests over sockets: its own scratch
/// directory, ipc:// endpoints, a 100 ms heartbeat. Call ``stop()`` in a `defer`.
final class LiveTestService {
    let directory: ScratchDirectory
    let commandEndpoint: String
    let eventsEndpoint: String
    private let process: ChildProcess

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
        directory = try ScratchDirectory(prefix: "live")
        commandEndpoint = directory.ipc("command")
        eventsEndpoint = directory.ipc("events")
        process = try ChildProcess.countries(
            [
                "serve", "--in-memory", "--command", commandEndpoint, "--events", eventsEndpoint,
                "--heartbeat-ms", "100", "--log-level", "warning",
            ], stdout: .discard, stderr: .file(directory.file("serve.log")))
    }

    private func waitUntilReady() throws {
        let context = try Context()
        let client = CommandClient(
            context: context, endpoint: commandEndpoint, timeout: .milliseconds(200), tries: 1)
        let ready = eventually(within: .seconds(10), every: .milliseconds(10)) {
            guard process.isRunning else { return true }
            return (try? client.send(.query(.list)))?.ok == true
        }
        guard ready, process.isRunning else {
            throw HarnessFailure("the service did not answer `list` within 10 s: \(process.stderr.text)")
        }
    }

    /// The service's `list`, asked on a fresh client.
    func list() throws -> Reply {
        let context = try Context()
        let client = CommandClient(
            context: context, endpoint: commandEndpoint, timeout: .seconds(2), tries: 3)
        return try client.send(.query(.list))
    }

    /// Sends `signal` to the service (SIGCONT, to resume it after ``pause()``).
    func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// Hangs the service (SIGSTOP, ``ChildProcess/pause(within:)``): it stops answering, with
    /// every thread stopped when this returns true.
    func pause() -> Bool {
        process.pause()
    }

    /// SIGTERM, then SIGKILL if it is still running after 3 s (scaled by
    /// `COUNTRIES_TEST_SLOWDOWN`); removes the scratch directory. Records an issue when SIGTERM
    /// was not enough: the service must stop cleanly on it. Not under the sanitizers: there a
    /// service's exit includes LeakSanitizer's scan of its heap, which on a busy machine took
    /// longer than the grace in two CI runs, with 3 s and then 12 s (ServeTests check the clean
    /// stop on real builds).
    func stop() {
        let stopped = process.isRunning ? process.stop(grace: .seconds(3) * testSlowdown) : nil
        if stopped == 128 + SIGKILL && testSlowdown == 1 {
            Issue.record("the service did not stop within 3 s of SIGTERM")
        }
        directory.remove()
    }
}
