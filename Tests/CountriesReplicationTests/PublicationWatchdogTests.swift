import Testing

@testable import CountriesReplication

/// A lag counts from when the replica knew of a committed seq, not from when anyone looked: the
/// tail leaves its watch after 0.4 s, heartbeats stop after 1 s; a replica that merely trails
/// steady writes by a moment does neither.
@Suite struct PublicationWatchdogTests {
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func aKnownSeqThatWaitsIsALagFromWhenItWasKnown() {
        var watchdog = PublicationWatchdog()
        watchdog.publish(10)
        watchdog.know(10, at: at(0))
        #expect(watchdog.lag(after: 10, now: at(500)) == .zero)
        watchdog.know(12, at: at(100))
        watchdog.know(14, at: at(300))
        #expect(watchdog.lag(after: 10, now: at(450)) == .milliseconds(350))
        // The tail handed 12 over: its lag counts from when 14 was known.
        #expect(watchdog.lag(after: 12, now: at(450)) == .milliseconds(150))
        #expect(watchdog.lag(after: 10, now: at(500)) >= PublicationWatchdog.tailLeavesAfter)
        #expect(watchdog.silence(now: at(1_000)) == nil)
        let silent = watchdog.silence(now: at(1_200))
        #expect(silent?.contains("published only up to seq 10 while seq 14 is committed (for 1.1 s)") == true)
        watchdog.publish(12)
        #expect(watchdog.silence(now: at(1_200)) == nil, "14 was known at 300 ms")
        #expect(watchdog.silence(now: at(1_300)) != nil)
        // Caught up: no lag, heartbeats again.
        watchdog.publish(14)
        #expect(watchdog.lag(after: 14, now: at(5_000)) == .zero)
        #expect(watchdog.silence(now: at(5_000)) == nil)
    }

    @Test func steadyWritesAreNotALag() {
        var watchdog = PublicationWatchdog()
        // Always a little ahead, but every seq known is published soon after.
        for tick in 0..<100 {
            watchdog.know(UInt64(tick * 10 + 10), at: at(tick * 500))
            watchdog.publish(UInt64(tick * 10 + 5))
            #expect(watchdog.lag(after: watchdog.published, now: at(tick * 500 + 100)) <= .milliseconds(600))
            #expect(watchdog.silence(now: at(tick * 500 + 100)) == nil, "tick \(tick)")
        }
    }

    @Test func aLongLagIsNeverUnderstatedWhenManySeqsWait() {
        var watchdog = PublicationWatchdog()
        for seq in 1...1_000 { watchdog.know(UInt64(seq), at: at(seq)) }
        watchdog.publish(999)
        // The seqs past the remembered ones count from the last remembered moment.
        #expect(watchdog.lag(after: 999, now: at(2_000)) >= .milliseconds(1_000))
        watchdog.publish(1_000)
        #expect(watchdog.lag(after: 1_000, now: at(2_000)) == .zero)
    }
}
