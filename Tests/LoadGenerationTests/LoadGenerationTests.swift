import CountriesCore
import Foundation
import LoadGeneration
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

/// The load generator the bench and the reliability tests share, against an in-process
/// ``ToggleServer``: small counts, every wait bounded and scaled by `COUNTRIES_TEST_SLOWDOWN`.
// A suite-wide limit, generous: in the whole suite a test may wait a minute and more for a
// thread of the test pool before it starts, and each of these bounds its own waits.
@Suite(.hangGuard()) struct LoadGenerationTests {
    @Test func percentilesAreNearestRankInMicroseconds() {
        let figures = Percentiles(nanos: (1...100).map { UInt64($0) * 1000 }.shuffled())
        #expect(figures.count == 100)
        #expect(figures.p50 == 50)
        #expect(figures.p99 == 99)
        #expect(figures.max == 100)
        let none = Percentiles(nanos: [])
        #expect(none.count == 0 && none.p50.isNaN && none.max.isNaN)
    }

    @Test
    func aLoadRunTimesEveryRoundTripOfEveryClient() throws {
        let scratch = try ScratchDirectory(prefix: "lg")
        defer { scratch.remove() }
        let server = try ToggleServer(endpoint: scratch.ipc("cmd"))
        defer { server.stop() }
        let context = try Context()
        defer { context.terminate() }
        let endpoint = server.endpoint
        let plan = LoadPlan(clients: 3, requests: 40, seconds: 30 * Double(testSlowdown), warmup: 5)
        let result = runLoad(plan) { index in
            try RequestClient(context: context, endpoint: endpoint, index: index, body: serviceToggleBody)
        }
        #expect(result.failures.isEmpty, "\(result.failures)")
        // The count, not the clock, ended each client: every timed round trip is a sample.
        #expect(result.completed == 120)
        #expect(result.latency.count == 120)
        #expect(server.answered.current == 3 * (40 + 5))
        #expect(result.perSecond > 0)
        #expect(result.latency.p50 > 0 && result.latency.p50 <= result.latency.max)
        #expect((result.clientCPUPerRequest ?? 0) > 0)
    }

    @Test
    func aClientThatCannotConnectIsAFailureAndTheOthersStillRun() throws {
        let scratch = try ScratchDirectory(prefix: "lg")
        defer { scratch.remove() }
        let server = try ToggleServer(endpoint: scratch.ipc("cmd"))
        defer { server.stop() }
        let context = try Context()
        defer { context.terminate() }
        let endpoint = server.endpoint
        let result = runLoad(LoadPlan(clients: 2, requests: 10, seconds: 30, warmup: 1)) { index in
            guard index == 0 else { throw LoadGenerationError("refused to connect") }
            return try RequestClient(
                context: context, endpoint: endpoint, index: index, body: serviceToggleBody)
        }
        #expect(result.failures == ["client 1: refused to connect"])
        #expect(result.completed == 10)
    }

    @Test
    func aCheckedClientCountsRefusalsByCode() throws {
        let scratch = try ScratchDirectory(prefix: "lg")
        defer { scratch.remove() }
        let server = try ToggleServer(endpoint: scratch.ipc("cmd"), refusing: 1)
        defer { server.stop() }
        let context = try Context()
        defer { context.terminate() }
        let endpoint = server.endpoint
        let refused = Locked<[String: Int]>([:])
        // Client i toggles row i: client 1's every toggle is refused, client 0's none.
        let result = runLoad(LoadPlan(clients: 2, requests: 25, seconds: 30, warmup: 0)) { index in
            try CheckedRequestClient(context: context, endpoint: endpoint, index: index, refused: refused)
        }
        #expect(result.failures.isEmpty, "\(result.failures)")
        #expect(result.completed == 50)
        #expect(refused.current == ["conflict": 25])
    }

    @Test
    func aPipelinedTogglerCountsWhatWasAnsweredAndWhatWasRefused() throws {
        let scratch = try ScratchDirectory(prefix: "lg")
        defer { scratch.remove() }
        // Toggle n is of row n mod 4; row 3 is refused: a quarter of the replies.
        let server = try ToggleServer(endpoint: scratch.ipc("cmd"), refusing: 3)
        defer { server.stop() }
        let toggler = PipelinedToggler(
            endpoint: server.endpoint, window: 8, countries: 4, client: 0,
            silenceLimit: .seconds(10 * testSlowdown))
        let outcome = toggler.run(until: ContinuousClock.now + .milliseconds(200))
        #expect(outcome.error == nil)
        let total = outcome.ok + outcome.refused
        #expect(total > 0)
        // Whatever was sent was answered before it returned.
        #expect(total == server.answered.current)
        // Toggles 0, 1, 2... of rows 0, 1, 2, 3, 0...: every fourth is refused, and all came back.
        #expect(outcome.refused == total / 4, "\(outcome.refused) of \(total) refused")
        #expect(outcome.longestGap > .zero)
    }

    @Test
    func aPipelinedTogglerWithNoServiceSaysSo() {
        let toggler = PipelinedToggler(
            endpoint: "ipc:///tmp/lg-nobody-\(UUID().uuidString.prefix(8))", window: 2, countries: 8,
            client: 0,
            silenceLimit: .milliseconds(300))
        let outcome = toggler.run(until: ContinuousClock.now + .seconds(5 * testSlowdown))
        #expect(outcome.ok == 0 && outcome.refused == 0)
        #expect(outcome.error?.hasPrefix("no reply for") == true, "\(outcome.error ?? "no error")")
    }

    @Test
    func threadsThatOutliveTheirBoundAreAnError() throws {
        let ran = Locked(0)
        try runThreads(4, within: .seconds(10 * testSlowdown)) { _ in ran.withLock { $0 += 1 } }
        #expect(ran.current == 4)
        let release = DispatchSemaphore(value: 0)
        #expect(throws: LoadGenerationError.self) {
            let outlived = 5.0  // unscaled: the thread is to outlive the 50 ms it is given
            try runThreads(1, within: .milliseconds(50)) { _ in _ = release.wait(timeout: .now() + outlived) }
        }
        release.signal()
    }

    /// The barrier opens when every party has come, for every one of them; one that never comes
    /// leaves the others waiting their whole bound, on the monotonic clock, and then false.
    @Test
    func aBarrierOpensForAllOnlyWhenAllHaveCome() throws {
        let barrier = Barrier(parties: 3)
        let passed = Locked(0)
        try runThreads(3, within: .seconds(10 * testSlowdown)) { _ in
            if barrier.wait(timeout: .seconds(10 * testSlowdown)) { passed.withLock { $0 += 1 } }
        }
        #expect(passed.current == 3)
        let short = Barrier(parties: 2)
        let started = ContinuousClock.now
        #expect(!short.wait(timeout: .milliseconds(100)))
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }
}
