import Foundation
import SystemSupport

@testable import CountriesStore

/// A clock for stores' request-id ages that a test moves by hand.
final class TestClock: Sendable {
    private let milliseconds: Locked<Int64>

    /// Starts at the real time, `hoursAhead` hours later (1 makes every id remembered before
    /// it old).
    init(hoursAhead: Int) {
        milliseconds = Locked(
            Int64((Date().timeIntervalSince1970 * 1000).rounded()) + Int64(hoursAhead) * 3_600_000)
    }

    /// The time now, for a store's `clock`.
    var now: @Sendable () -> Int64 { { self.milliseconds.withLock { $0 } } }

    func advance(by duration: Duration) {
        milliseconds.withLock { $0 += Int64(duration.components.seconds) * 1000 }
    }
}

extension RequestIDRetention {
    /// Ids kept by count alone (no age floor), as before ages were kept.
    static var countOnly: RequestIDRetention {
        var retention = RequestIDRetention()
        retention.minimumAge = .zero
        return retention
    }
}
