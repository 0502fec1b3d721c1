/// How long a replica has known of a committed seq it has not published: from the moment it
/// knew (its own commit, or its quorum probe's read of `seq`), not from when anyone looked. The
/// event tail leaves a watch that lets a known seq wait ``tailLeavesAfter`` (a member that hangs
/// still accepts connections and keeps a watch open without a word), and the replica stops
/// heartbeating once its published seq trails for ``silenceAfter``, so no view takes its old
/// data for live (docs/HA.md, "Publishing"). A plain value; ``ClusterHealth`` keeps one.
struct PublicationWatchdog {
    /// How long the tail lets a known seq wait on its watch before it reads from another member.
    static let tailLeavesAfter: Duration = .milliseconds(400)
    /// How long a known seq may wait to be published before heartbeats stop.
    static let silenceAfter: Duration = .seconds(1)
    /// Most seqs remembered with the moment they became known; beyond it the newest one is
    /// raised instead (a lag then counts from the earlier moment: never shorter than it is).
    static let remembered = 64

    /// Seqs known committed and not yet published, each with when it became known, ascending.
    private var known: [(seq: UInt64, since: ContinuousClock.Instant)] = []
    /// The last seq published.
    private(set) var published: UInt64 = 0

    /// The highest seq known committed (what the replica must publish).
    var latest: UInt64 { known.last?.seq ?? published }

    /// `seq` is committed, as of `now`.
    mutating func know(_ seq: UInt64, at now: ContinuousClock.Instant) {
        guard seq > latest else { return }
        if known.count < Self.remembered {
            known.append((seq, now))
        } else {
            known[known.count - 1].seq = seq
        }
    }

    /// Every seq up to `seq` is published.
    mutating func publish(_ seq: UInt64) {
        published = max(published, seq)
        known.removeAll { $0.seq <= published }
    }

    /// How long the first known seq after `progress` has waited (zero when there is none).
    func lag(after progress: UInt64, now: ContinuousClock.Instant) -> Duration {
        guard let first = known.first(where: { $0.seq > progress }) else { return .zero }
        return max(.zero, now - first.since)
    }

    /// Why heartbeats should stop now, or nil: the published seq trailed for ``silenceAfter``.
    func silence(now: ContinuousClock.Instant) -> String? {
        let waited = lag(after: published, now: now)
        guard waited >= Self.silenceAfter else { return nil }
        let seconds = Double(waited / .milliseconds(1)) / 1000
        return
            "this replica has published only up to seq \(published) while seq \(latest) is committed (for \(String(format: "%.1f", seconds)) s)"
    }
}
