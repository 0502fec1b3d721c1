import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// `countries events`: following the PUB channel while other processes change the list.
@Suite struct EventsTests {
    /// Toggles `target` from another process until `events` has exited (bounded), since there is no
    /// way to see from outside when its subscription is connected.
    private func toggle(_ target: String, on service: Service, until events: RunningProcess) throws {
        let deadline = ContinuousClock.now + .seconds(15) * testSlowdown
        while ContinuousClock.now < deadline {
            let toggle = try service.run(["toggle", target])
            #expect(toggle.exitCode == 0, "\(toggle)")
            if events.waitForExit(timeout: .milliseconds(150)) { return }
        }
    }

    @Test func countTwoJSONPrintsTheNextTwoEvents() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(try service.run(["toggle", "Spain"]).exitCode == 0)

        let events = try Countries.start(
            ["events", "--count", "2", "--json", "--events", sandbox.eventsEndpoint] + sandbox.client)
        defer { events.stop(signal: SIGKILL) }
        try toggle("Italy", on: service, until: events)

        let result = try events.finish(timeout: .seconds(5))
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.lines.count == 2, "\(result)")
        let printed = try result.lines.map { try jsonObject($0) }
        let seqs = printed.compactMap { $0["seq"] as? Int }
        #expect(seqs.count == 2 && seqs[0] >= 2 && seqs[1] == seqs[0] + 1, "\(result)")
        for event in printed {
            #expect(event["topic"] as? String == "country.changed")
            #expect((event["country"] as? [String: Any])?["name"] as? String == "Italy")
        }
        // Two toggles in a row: the flag flips each time.
        let flags = printed.compactMap { ($0["country"] as? [String: Any])?["visited"] as? Bool }
        #expect(flags.count == 2 && flags[0] != flags[1])
    }

    @Test func sinceZeroPrintsHistoryThenFollows() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(try service.run(["toggle", "France", "Spain"]).exitCode == 0)
        #expect(try service.run(["add", "Peru"]).exitCode == 0)

        let events = try Countries.start(
            ["events", "--since", "0", "--count", "5", "--events", sandbox.eventsEndpoint] + sandbox.client)
        defer { events.stop(signal: SIGKILL) }
        try toggle("Peru", on: service, until: events)

        let result = try events.finish(timeout: .seconds(5))
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.lines == [
                "1  country.changed  2 France [x]", "2  country.changed  4 Spain [x]",
                "3  country.added  8 Peru",
                "4  country.changed  8 Peru [x]", "5  country.changed  8 Peru",
            ], "\(result)")
    }

    @Test func followsUntilSIGTERM() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(try service.run(["toggle", "France"]).exitCode == 0)

        let events = try Countries.start(
            ["events", "--since", "0", "--json", "--events", sandbox.eventsEndpoint] + sandbox.client)
        defer { events.stop(signal: SIGKILL) }
        // The history arrives; the process keeps following.
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        while !events.stdoutSoFar.contains("\n"), ContinuousClock.now < deadline { usleep(20_000) }
        #expect(events.isRunning)
        events.stop(signal: SIGTERM)
        let result = try events.finish(timeout: .seconds(5))
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.lines.count == 1, "\(result)")
        #expect(try jsonObject(result.lines.first ?? "")["seq"] as? Int == 1)
    }
}
