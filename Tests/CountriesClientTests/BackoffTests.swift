import CountriesClient
import Testing

/// ``Backoff`` doubles from its first wait to its cap and starts over when reset.
@Suite struct BackoffTests {
    @Test func waitsDoubleUpToTheMaximumAndStayThere() {
        var backoff = Backoff(initial: .milliseconds(100), maximum: .milliseconds(700))
        let waits = (0..<6).map { _ in backoff.next() }
        #expect(waits == [100, 200, 400, 700, 700, 700].map { Duration.milliseconds($0) })
    }

    @Test func resetStartsAgainFromTheFirstWait() {
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(8))
        _ = backoff.next()
        _ = backoff.next()
        #expect(backoff.upcoming == .seconds(4))
        backoff.reset()
        #expect(backoff.next() == .seconds(1))
    }

    @Test func aMaximumBelowTheFirstWaitIsTheFirstWait() {
        var backoff = Backoff(initial: .seconds(2), maximum: .seconds(1))
        #expect(backoff.maximum == .seconds(2))
        #expect([backoff.next(), backoff.next()] == [.seconds(2), .seconds(2)])
    }
}
