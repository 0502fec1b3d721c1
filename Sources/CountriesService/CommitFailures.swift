import Foundation
import SystemSupport

/// The commits that failed, for the log and for readiness. A full disk refuses every commit: its
/// error line is written a few times in each 10 s and the rest counted (``RefusalLog``), where
/// one line per commit flooded the log. The newest failure makes the service not ready
/// (`/readyz`, `countries_ready`) for ``readinessWindow`` after it or until a commit succeeds:
/// the store's own check before trying (``CountriesStore/StateStore/unavailability``) cannot
/// see a full disk, and a readiness that stayed off until a commit succeeded would keep away the
/// very changes that would show it recovered.
struct CommitFailures {
    /// How long a failed commit keeps the service not ready, without a commit that succeeds.
    static let readinessWindow: Duration = .seconds(10)

    private var log = RefusalLog(window: .seconds(10), perWindow: 5, noun: "commit failures")
    private var last: (reason: String, at: ContinuousClock.Instant)?

    /// Records a failed commit; the line to log, or nil when the log has had its share.
    mutating func failed(_ line: String, reason: String, now: ContinuousClock.Instant) -> String? {
        last = (reason, now)
        return log.record(line, now: now)
    }

    /// A commit succeeded: ready again.
    mutating func succeeded() {
        last = nil
    }

    /// Why the service is not ready for a commit that failed within ``readinessWindow``, or nil.
    func unreadiness(now: ContinuousClock.Instant) -> String? {
        guard let last, now - last.at < Self.readinessWindow else { return nil }
        let seconds = (now - last.at).components.seconds
        return
            "a commit failed \(seconds) s ago (\(last.reason)); ready again once one succeeds or after \(Self.readinessWindow.components.seconds) s without a failure"
    }
}
