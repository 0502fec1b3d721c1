/// A wait that doubles after each failed try, from ``initial`` up to ``maximum``, and starts
/// over after a success: how a client paces its asks of a service that does not answer yet.
public struct Backoff: Sendable, Equatable {
    /// The first wait, and the one after ``reset()``.
    public let initial: Duration
    /// The longest wait (never below ``initial``).
    public let maximum: Duration
    /// The wait the next call of ``next()`` returns.
    public private(set) var upcoming: Duration

    /// Creates a backoff that starts at `initial`.
    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(maximum, initial)
        self.upcoming = initial
    }

    /// The wait before the next try; the one after it is twice as long, up to ``maximum``.
    public mutating func next() -> Duration {
        let wait = upcoming
        upcoming = min(upcoming * 2, maximum)
        return wait
    }

    /// Starts again from ``initial``: the service answered.
    public mutating func reset() {
        upcoming = initial
    }
}
