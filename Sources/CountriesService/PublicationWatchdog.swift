/// Notices a replica whose published events fall behind the seq etcd's quorum reported: when a
/// seq etcd reported is still not published ``restartAfter`` later, the event tail should
/// follow the log again (a watch can go silent on a cut connection, which TCP may take minutes
/// to notice), and from ``silenceAfter`` on, the replica should stop heartbeating rather than
/// pass old data off as live (docs/HA.md, "Publishing"). A plain value, checked at each
/// heartbeat.
struct PublicationWatchdog {
    /// What the replica should do now.
    struct Verdict: Equatable {
        /// Tell the tail to follow the log again.
        var restartTail = false
        /// Why heartbeats should stop, when they should.
        var silence: String?
    }

    var restartAfter: Duration = .milliseconds(1_500)
    var silenceAfter: Duration = .seconds(3)
    /// A seq etcd reported that was not published yet, and since when. Fixed until it is
    /// published, so that steady writes (etcd always a little ahead) are not a lag.
    private var target: (seq: UInt64, since: ContinuousClock.Instant)?
    /// When the tail was last told to restart, for this target.
    private var restarted: ContinuousClock.Instant?

    /// Checks the seq etcd reported (`latest`) against the seq last `published`.
    mutating func check(latest: UInt64, published: UInt64, now: ContinuousClock.Instant) -> Verdict {
        if let target, published >= target.seq {
            self.target = nil
            restarted = nil
        }
        if target == nil, latest > published { target = (latest, now) }
        guard let target else { return Verdict() }
        var verdict = Verdict()
        let waited = now - target.since
        // At most one restart every half of `restartAfter`.
        if waited >= restartAfter, restarted.map({ now - $0 >= restartAfter / 2 }) ?? true {
            verdict.restartTail = true
            restarted = now
        }
        if waited >= silenceAfter {
            verdict.silence =
                "this replica has published only up to seq \(published) while etcd is at seq \(target.seq)"
        }
        return verdict
    }
}
