import SystemSupport

/// What a process's loop publishes for its metrics endpoint: a snapshot it renders and judges
/// on the HTTP server's thread, never touching the loop's own state.
public protocol MetricsSnapshot: Sendable {
    /// The metrics, as of the snapshot.
    var metrics: MetricsText { get }
    /// Why the process cannot do its work now (`/readyz` answers 503 with it), or nil.
    var unreadiness: String? { get }
}

/// The latest snapshot a loop published, read by the HTTP server's threads: the loop never
/// waits on them beyond one swap under the lock (docs/OPERATIONS.md).
public final class MetricsBoard<Snapshot: MetricsSnapshot>: Sendable {
    private let latest = Locked<(snapshot: Snapshot, at: ContinuousClock.Instant)?>(nil)
    /// After this long without a snapshot, the loop is taken to be stuck: not ready.
    public let staleAfter: Duration

    /// An empty board; the loop is expected to publish at least every `staleAfter`.
    public init(staleAfter: Duration = .seconds(10)) {
        self.staleAfter = staleAfter
    }

    /// Replaces the snapshot (the loop's thread).
    public func publish(_ snapshot: Snapshot, at instant: ContinuousClock.Instant = .now) {
        latest.withLock { $0 = (snapshot, instant) }
    }

    /// The latest snapshot, if any.
    public var snapshot: Snapshot? { latest.withLock { $0?.snapshot } }

    /// The exposition of the latest snapshot (empty before the first).
    public func exposition() -> String {
        snapshot?.metrics.encoded ?? ""
    }

    /// Why the process is not ready at `now`, or nil when it is.
    public func unreadiness(now: ContinuousClock.Instant = .now) -> String? {
        guard let (snapshot, at) = latest.withLock({ $0 }) else {
            return "starting: no snapshot published yet"
        }
        let age = now - at
        if age > staleAfter {
            return "the service loop has published nothing for \(age.components.seconds) s (stuck?)"
        }
        return snapshot.unreadiness
    }
}
