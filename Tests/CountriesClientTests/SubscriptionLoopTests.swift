import CountriesClient
import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// The one loop every subscriber runs, against a real service: what it hands over, the caller's
/// descriptors, and a poll cut short by a signal.
@Suite(.serialized) struct SubscriptionLoopTests {
    /// A pipe the test writes to, as stdin or a signal pipe would be.
    private final class Pipe {
        let read: Int32
        let write: Int32
        init() throws {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw HarnessFailure("pipe failed") }
            (read, write) = (fds[0], fds[1])
        }
        deinit {
            close(read)
            close(write)
        }
    }

    private func subscription(_ service: LiveTestService, keepsStates: Bool) throws -> LiveSubscription {
        try LiveSubscription(
            context: Context(),
            endpoints: .init(command: service.commandEndpoint, events: service.eventsEndpoint),
            heartbeatInterval: .milliseconds(100), keepsStates: keepsStates)
    }

    @Test func handsOverUpdatesWithTheirStatesAndTheCallersDescriptors() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let input = try Pipe()
        let loop = SubscriptionLoop(
            subscription: try subscription(service, keepsStates: true), fileDescriptors: [input.read])
        let client = CommandClient(context: try Context(), endpoint: service.commandEndpoint)
        var states: [UInt64] = []
        var applied: [UInt64] = []
        var typed = false
        var ticks = 0
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        try loop.run { happening, now in
            switch happening {
            case .update(let update):
                states += update.states.map(\.seq)
                applied += update.applied.map(\.seq)
                #expect(update.states.last.map { $0 == update.replica } ?? true)
                if update.phase == .live, update.replica?.seq == 0, applied.isEmpty {
                    _ = try client.send(.change(.toggle(.name("France"))))
                }
                if update.replica?.seq == 1 { _ = Glibc.write(input.write, "x", 1) }
            case .readable(let descriptor):
                #expect(descriptor == input.read)
                var byte: UInt8 = 0
                _ = Glibc.read(input.read, &byte, 1)
                typed = true
                return false
            case .replies:
                Issue.record("no requests of the caller's own")
            case .tick:
                ticks += 1
            }
            return now < deadline
        }
        #expect(typed, "the caller's descriptor was handed over")
        #expect(states == [0, 1], "the snapshot's state, then the state after the toggle")
        #expect(applied == [1])
        #expect(ticks > 0)
    }

    @Test func withoutKeepingStatesOnlyTheReplicaComes() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let loop = SubscriptionLoop(subscription: try subscription(service, keepsStates: false))
        var sawLive = false
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        try loop.run { happening, now in
            guard case .update(let update) = happening else { return now < deadline }
            #expect(update.states.isEmpty)
            sawLive = update.phase == .live && update.replica?.seq == 0
            return !sawLive && now < deadline
        }
        #expect(sawLive)
    }

    /// A signal during the poll (EINTR) is not an error: the loop goes on and the caller's
    /// deadline still wakes it.
    @Test func aSignalDuringThePollIsNotAnError() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        try #require(InterruptingSignal.isInstalled)
        let loopThread = pthread_self()
        let signaller = Thread {
            for _ in 0..<5 {
                usleep(30_000)
                InterruptingSignal.send(to: loopThread)
            }
        }
        let loop = SubscriptionLoop(subscription: try subscription(service, keepsStates: false))
        let start = ContinuousClock.now
        let stopAt = start + .milliseconds(400)
        var wokeAt: ContinuousClock.Instant?
        signaller.start()
        let deadline: (ContinuousClock.Instant) -> ContinuousClock.Instant? = { _ in stopAt }
        try loop.run(deadline: deadline) { _, now in
            if now >= stopAt { wokeAt = now }
            return wokeAt == nil && now < start + .seconds(10) * testSlowdown
        }
        let woke = try #require(wokeAt)
        #expect(
            woke - start < .seconds(2) * testSlowdown,
            "the caller's deadline woke the loop despite the signals")
    }
}
