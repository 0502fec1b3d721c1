import Foundation
import TestSupport
import Testing

/// Finding the service: options, environment, and what happens when nobody answers.
@Suite struct ConnectionTests {
    @Test func environmentNamesTheEndpoints() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }

        let environment = [
            "COUNTRIES_COMMAND": sandbox.commandEndpoint, "COUNTRIES_EVENTS": sandbox.eventsEndpoint,
        ]
        let count = try Countries.run(["count"], environment: environment)
        #expect(count.exitCode == 0 && count.stdout == "8\n", "\(count)")

        // events reads both from the environment: the toggle's event arrives on COUNTRIES_EVENTS.
        let events = try Countries.start(
            ["events", "--count", "1", "--since", "0"], environment: environment)
        defer { events.stop(signal: SIGKILL) }
        let toggle = try Countries.run(["toggle", "Moldova"], environment: environment)
        #expect(toggle.exitCode == 0, "\(toggle)")
        let printed = try events.finish(timeout: .seconds(10))
        #expect(
            printed.exitCode == 0 && printed.stdout == "1  country.changed  6 Moldova [x]\n", "\(printed)")

        // An explicit option wins over the environment.
        let explicit = try Countries.run(
            ["count", "--command", sandbox.commandEndpoint],
            environment: ["COUNTRIES_COMMAND": "ipc://" + sandbox.file("nobody")])
        #expect(explicit.exitCode == 0, "\(explicit)")
    }

    /// No service: a change's outcome is unknown (exit 75, with its request id to retry with),
    /// a read simply got no reply (exit 69); both within the retry budget.
    @Test func unreachableServiceEndsWithinTheRetryBudget() throws {
        let sandbox = try Sandbox()
        let endpoint = "ipc://" + sandbox.file("nobody")
        let result = try Countries.run([
            "toggle", "France", "--command", endpoint, "--timeout", "300", "--retries", "2",
        ])
        #expect(result.exitCode == 75, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr.hasPrefix(
                "countries: outcome unknown: the change may or may not have been applied (no reply from \(endpoint) after 2 tries); request id "
            ), "\(result)")
        #expect(result.stderr.contains("send it again with --id "), "\(result)")
        #expect(result.duration >= .milliseconds(500), "\(result)")
        #expect(result.duration < .seconds(3), "\(result)")

        let once = try Countries.run(
            ["count", "--timeout", "100", "--retries", "1"], environment: ["COUNTRIES_COMMAND": endpoint])
        #expect(once.exitCode == 69, "\(once)")
        #expect(once.stderr.hasPrefix("countries: no reply from \(endpoint) after 1 try"), "\(once)")
    }
}
