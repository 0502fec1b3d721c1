import SystemSupport
import Testing

/// A flood of refusals (or of any warning) makes a few lines and a count, not a flood of lines.
@Suite struct RefusalLogTests {
    @Test("RefusalLog writes the first few in a window, then summarizes what it suppressed")
    func refusalLogRateLimits() {
        var log = RefusalLog(window: .seconds(10), perWindow: 3)
        let start = ContinuousClock.now
        let first = (0..<3).map {
            log.record("refused connection: client \($0)", now: start + .milliseconds($0))
        }
        #expect(
            first == [
                "refused connection: client 0", "refused connection: client 1",
                "refused connection: client 2",
            ])
        for index in 3..<10 {
            #expect(log.record("refused connection: client \(index)", now: start + .seconds(1)) == nil)
        }
        let next = log.record("refused connection: client 10", now: start + .seconds(11))
        #expect(next == "(7 more refusals not logged) refused connection: client 10")
        // A new window starts without a summary when nothing was suppressed.
        #expect(
            log.record("refused connection: client 11", now: start + .seconds(30))
                == "refused connection: client 11")
    }
}
