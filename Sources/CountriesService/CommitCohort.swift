import Foundation

/// The clients a grouped commit answered, and how long that commit took. Each of them sends its
/// next request while the next commit is already under way, so with many clients two cohorts
/// take turns, each commit carrying half of them. Before a commit the loop waits for those of
/// the last cohort that have not sent again, never longer than half the last commit and
/// ``longestWait``, so one commit carries what would have been two (docs/BENCHMARKS.md,
/// "Stop 27"). A lone client, answered and back already, never waits; as PostgreSQL's
/// `commit_delay`, the wait is only for others known to be busy. The loop asks only for a
/// replica's commits to etcd, which take milliseconds.
struct CommitCohort {
    /// The longest a batch waits for the rest of the last cohort.
    static let longestWait = Duration.milliseconds(2)

    /// The peers the last grouped commit answered.
    private(set) var answered: Set<Data> = []
    /// How long the last grouped commit took.
    private(set) var lastCommit: Duration = .zero

    /// The peers of the last cohort that have not sent again among `peers` (the batch in hand),
    /// and how long to wait for them at most; nil to commit at once.
    func missing(from peers: some Sequence<Data>) -> (peers: Set<Data>, wait: Duration)? {
        guard !answered.isEmpty else { return nil }
        var missing = answered
        for peer in peers { missing.remove(peer) }
        let wait = min(lastCommit / 2, Self.longestWait)
        guard !missing.isEmpty, wait > .zero else { return nil }
        return (missing, wait)
    }

    /// Records a grouped commit of requests from `peers` that took `duration`.
    mutating func committed(peers: some Sequence<Data>, took duration: Duration) {
        answered = Set(peers)
        lastCommit = duration
    }
}
