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

    /// The requests of each peer the last grouped commit answered: one for a client, and as
    /// many as it forwarded for a replica that hands its clients' changes to the writer (they
    /// all come from its one connection).
    private(set) var answered: [Data: Int] = [:]
    /// How long the last grouped commit took.
    private(set) var lastCommit: Duration = .zero

    /// The requests of the last cohort not sent again yet, by peer, and how long to wait for
    /// them at most.
    struct Awaited: Equatable {
        /// The requests still awaited, by peer.
        private(set) var requests: [Data: Int]
        /// The longest to wait for them.
        let wait: Duration

        /// Whether every awaited request came.
        var isComplete: Bool { requests.isEmpty }

        /// Notes a request from `peer`.
        mutating func received(from peer: Data) {
            guard let count = requests[peer] else { return }
            requests[peer] = count > 1 ? count - 1 : nil
        }
    }

    /// The requests of the last cohort not sent again among `peers` (the batch in hand, a peer
    /// once per request), and how long to wait for them; nil to commit at once.
    func missing(from peers: some Sequence<Data>) -> Awaited? {
        guard !answered.isEmpty else { return nil }
        var awaited = Awaited(requests: answered, wait: min(lastCommit / 2, Self.longestWait))
        for peer in peers { awaited.received(from: peer) }
        guard !awaited.isComplete, awaited.wait > .zero else { return nil }
        return awaited
    }

    /// Records a grouped commit of requests from `peers` (a peer once per request) that took
    /// `duration`.
    mutating func committed(peers: some Sequence<Data>, took duration: Duration) {
        answered = [:]
        for peer in peers { answered[peer, default: 0] += 1 }
        lastCommit = duration
    }
}
