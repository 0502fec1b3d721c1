import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// How much slower this run is than a plain one: `COUNTRIES_TEST_SLOWDOWN` (a whole number, at
/// least 1; `scripts/test --sanitize` sets 4, since sanitized code runs several times slower).
public let testSlowdown: Int = max(
    1, Int(ProcessInfo.processInfo.environment["COUNTRIES_TEST_SLOWDOWN"] ?? "") ?? 1)

/// Polls `condition` every `interval` until it holds or `limit` times ``testSlowdown`` has
/// passed; whether it held. The one bounded wait of the test suites: it scales by itself, so no
/// caller forgets to (an unscaled wait failed CI by chance under ThreadSanitizer).
@discardableResult
public func eventually(
    within limit: Duration = .seconds(5), every interval: Duration = .milliseconds(20),
    _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = ContinuousClock.now + limit * testSlowdown
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        sleep(for: interval)
    }
}

/// Blocks the calling thread for `duration` (no-op for zero or less).
public func sleep(for duration: Duration) {
    guard duration > .zero else { return }
    Thread.sleep(forTimeInterval: duration.timeInterval)
}

extension Duration {
    /// The duration in seconds, for APIs that take a `TimeInterval`.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in whole milliseconds (rounded down), for figures and options.
    public var milliseconds: Int { Int(self / .milliseconds(1)) }
}
