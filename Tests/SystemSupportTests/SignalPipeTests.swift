@preconcurrency import Glibc
import SystemSupport
import Testing

/// ``SignalPipe/arrives(within:)``: a wait that a signal ends, and that leaves the signal to
/// ``SignalPipe/drain()``. Serialized: signal handlers are process-wide.
@Suite(.serialized) struct SignalPipeTests {
    @Test func aSignalEndsTheWaitAndIsStillThereToDrain() throws {
        let signals = try SignalPipe(signals: [SIGUSR2])
        defer { SignalPipe.restoreDefault(SIGUSR2) }
        #expect(!signals.arrives(within: .milliseconds(20)))
        raise(SIGUSR2)
        #expect(signals.arrives(within: .zero))
        #expect(signals.arrives(within: .seconds(1)), "looking does not take it")
        #expect(signals.drain() == [SIGUSR2])
        #expect(!signals.arrives(within: .zero))
    }

    @Test func noSignalWaitsTheWholeTime() throws {
        let signals = try SignalPipe(signals: [SIGUSR2])
        defer { SignalPipe.restoreDefault(SIGUSR2) }
        let started = ContinuousClock.now
        #expect(!signals.arrives(within: .milliseconds(50)))
        #expect(ContinuousClock.now - started >= .milliseconds(50))
    }
}
