import Testing

@testable import CountriesService

/// A replica whose event tail went silent restarts it, then stops heartbeating; a replica that
/// merely trails steady writes by a moment does neither.
@Suite struct PublicationWatchdogTests {
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func aSilentTailIsRestartedThenTheReplicaFallsSilent() {
        var watchdog = PublicationWatchdog()
        #expect(watchdog.check(latest: 10, published: 10, now: at(0)) == .init())
        #expect(watchdog.check(latest: 12, published: 10, now: at(100)) == .init())
        #expect(watchdog.check(latest: 14, published: 10, now: at(1_000)) == .init())
        let restart = watchdog.check(latest: 14, published: 10, now: at(1_700))
        #expect(restart.restartTail && restart.silence == nil)
        #expect(!watchdog.check(latest: 14, published: 10, now: at(1_900)).restartTail, "not at every check")
        let silent = watchdog.check(latest: 14, published: 10, now: at(3_200))
        #expect(silent.silence?.contains("published only up to seq 10 while etcd is at seq 12") == true)
        // Caught up: heartbeats again.
        #expect(watchdog.check(latest: 14, published: 14, now: at(3_300)) == .init())
    }

    @Test func steadyWritesAreNotALag() {
        var watchdog = PublicationWatchdog()
        // etcd is always a little ahead, but every seq it reported is published soon after.
        for tick in 0..<100 {
            let latest = UInt64(tick * 10 + 10)
            let published = UInt64(tick * 10 + 5)
            #expect(
                watchdog.check(latest: latest, published: published, now: at(tick * 500)) == .init(),
                "tick \(tick)")
        }
    }
}
