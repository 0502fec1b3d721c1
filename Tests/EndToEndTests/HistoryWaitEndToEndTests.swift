import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// `events` and `on-change` must see every change: when the service cannot answer `history` for
/// a while (a replica without etcd answers `unavailable`), they wait for it and say so, instead
/// of ending; a stop signal still ends them at once.
@Suite struct HistoryWaitEndToEndTests {
    /// A gate in front of a service's command endpoint: it refuses the first `refusals` history
    /// requests `unavailable` (every one when nil), each with a message of its own, or with
    /// `drops` never answers them, and forwards everything else.
    final class Gate: Sendable {
        let endpoint: String
        let refusedHistories = Box(0)
        private let stopping = Box(false)
        private let finished = DispatchSemaphore(value: 0)

        init(in sandbox: Sandbox, refusing refusals: Int?, drops: Bool = false) throws {
            endpoint = sandbox.scratch.ipc("gate")
            let endpoint = endpoint
            let context = try Context()
            let service = sandbox.commandEndpoint
            let refusedHistories = self.refusedHistories
            let stopping = self.stopping
            let finished = self.finished
            let bound = Box<String?>(nil)
            let ready = DispatchSemaphore(value: 0)
            // The sockets live on the gate's thread; it binds before the test goes on.
            Thread {
                defer { finished.signal() }
                guard let front = try? context.makeSocket(.router) else {
                    bound.value = "no socket"
                    ready.signal()
                    return
                }
                defer { front.close() }
                do {
                    try front.setOption(.linger, 0)
                    try front.setOption(.receiveTimeout, 100)
                    try front.bind(endpoint)
                    bound.value = ""
                } catch {
                    bound.value = "\(error)"
                }
                ready.signal()
                while !stopping.value {
                    guard let frames = try? front.receive(), let body = frames.last,
                        let request = try? Request.decode(body)
                    else { continue }
                    let answer: Data
                    if case .history = request.command,
                        refusals.map({ refusedHistories.value < $0 }) ?? true
                    {
                        let count = refusedHistories.update {
                            $0 += 1
                            return $0
                        }
                        if drops { continue }
                        answer = Reply(
                            error: CountriesError(.unavailable, "etcd is not reachable (\(count))")
                        )
                        .encoded()
                    } else {
                        guard let forwarded = try? Self.forward(body, to: service, in: context) else {
                            continue
                        }
                        answer = forwarded
                    }
                    _ = try? front.send(Array(frames.dropLast()) + [answer])
                }
            }.start()
            _ = ready.wait(timeout: .now() + 10.0 * Double(testSlowdown))
            guard bound.value == "" else {
                throw HarnessFailure("the gate did not bind: \(bound.value ?? "timeout")")
            }
        }

        private static func forward(_ body: Data, to endpoint: String, in context: Context) throws -> Data? {
            let socket = try context.makeSocket(.req)
            defer { socket.close() }
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveTimeout, Int32(5_000 * testSlowdown))
            try socket.connect(endpoint)
            try socket.send([body])
            return try socket.receive()?.last
        }

        func stop() {
            stopping.value = true
            _ = finished.wait(timeout: .now() + 10.0 * Double(testSlowdown))
        }
    }

    @Test func eventsWaitsOutRefusedHistoryAndPrintsEveryChange() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(try service.run(["toggle", "France", "Spain"]).exitCode == 0)
        let gate = try Gate(in: sandbox, refusing: 3)
        defer { gate.stop() }

        let events = try Countries.start([
            "events", "--since", "0", "--count", "2", "--retries", "1", "--command", gate.endpoint,
            "--events", sandbox.eventsEndpoint,
        ])
        defer { events.stop(signal: SIGKILL) }
        let result = try events.finish(timeout: .seconds(20))
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.lines == ["1  country.changed  2 France [x]", "2  country.changed  4 Spain [x]"],
            "\(result)")
        #expect(gate.refusedHistories.value == 3)
        // Said once, though each refusal's words differ.
        let waits = result.stderr.split(separator: "\n").filter { $0.contains("did not come") }
        #expect(
            waits == [
                "countries: history after seq 0 did not come: etcd is not reachable (1); asking again until it does"
            ], "said once: \(result.stderr)")
        #expect(result.stderr.contains("history after seq 0 came through; going on"), "\(result.stderr)")
    }

    @Test func onChangeWaitingForHistoryStopsAtSIGTERM() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        let status = try jsonReply(service.run(["status", "--json"]))
        let store = try #require(status["store"] as? String)
        let cursor = sandbox.scratch.file("cursor.json")
        try Data(#"{"seq": 0, "store": "\#(store)"}"#.utf8).write(to: URL(fileURLWithPath: cursor))
        let gate = try Gate(in: sandbox, refusing: nil)
        defer { gate.stop() }

        let onChange = try Countries.start([
            "on-change", "--cursor", cursor, "--retries", "1", "--command", gate.endpoint,
            "--events", sandbox.eventsEndpoint, "--", "true",
        ])
        defer { onChange.stop(signal: SIGKILL) }
        #expect(
            eventually(within: .seconds(10)) { gate.refusedHistories.value >= 3 },
            "it asks again: \(onChange.stderrSoFar)")
        #expect(onChange.isRunning, "it waits instead of ending: \(onChange.stderrSoFar)")
        onChange.stop(signal: SIGTERM)
        let result = try onChange.finish(timeout: .seconds(5))
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("history after seq 0 did not come"), "\(result.stderr)")
        // Nothing ran: the cursor still holds seq 0.
        #expect(try jsonObject(sandbox.scratch.read("cursor.json"))["seq"] as? Int == 0)
    }

    /// A history request the service never answers, with a long timeout: SIGTERM ends the wait
    /// at once, not after every try's timeout.
    @Test func aStopEndsTheWaitForAnUnansweredHistoryAtOnce() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        let gate = try Gate(in: sandbox, refusing: nil, drops: true)
        defer { gate.stop() }

        let events = try Countries.start([
            "events", "--since", "0", "--timeout", "60000", "--retries", "3", "--command", gate.endpoint,
            "--events", sandbox.eventsEndpoint,
        ])
        defer { events.stop(signal: SIGKILL) }
        #expect(eventually(within: .seconds(10)) { gate.refusedHistories.value >= 1 }, "history was asked")
        let stopped = ContinuousClock.now
        events.stop(signal: SIGTERM)
        let result = try events.finish(timeout: .seconds(10))
        #expect(result.exitCode == 0, "\(result)")
        // Three tries of 60 s each before; now the signal ends it.
        #expect(ContinuousClock.now - stopped < .seconds(10) * testSlowdown)
        #expect(gate.refusedHistories.value == 1, "asked once")
    }
}
