import Etcd
import Foundation
import SystemSupport

/// What a replica knows of its etcd cluster: when it last had an answer that took a quorum (a
/// linearizable read, or a commit), and the members and leader it last saw. ``QuorumProbe`` writes
/// it on its own thread; the service loop reads it to decide whether to heartbeat and to accept
/// changes, and `status` reports it (docs/HA.md, "Losing the quorum"). It also holds what the
/// replica's etcd connections share: the members that stopped answering (``members``), and the seqs
/// known committed but not yet published (docs/HA.md, "Publishing").
public final class ClusterHealth: Sendable {
    /// The members and leader as last seen.
    struct Cluster: Equatable, Sendable {
        /// Each member as `name=client URL`.
        var members: [String] = []
        /// The leader's name, or nil when no member named one.
        var leader: String?
    }

    private struct State {
        var lastQuorum: ContinuousClock.Instant
        var lastError: String?
        var cluster = Cluster()
        var latestSeq: UInt64 = 0
        var damage: String?
        var replaced: String?
        var noSpace: String?
        var publication = PublicationWatchdog()
    }

    /// How long without a quorum read before the replica says it has no quorum: it then stops
    /// heartbeating and refuses changes with `storage_error` until a read succeeds again.
    let quorumTimeout: Duration
    /// The members that stopped answering one of this replica's connections: all of them avoid
    /// those until the probe finds them answering again.
    public let members = EtcdMemberHealth()
    private let state: Locked<State>

    /// Starts as healthy: the store was just read through a quorum.
    public init(quorumTimeout: Duration) {
        self.quorumTimeout = quorumTimeout
        state = Locked(State(lastQuorum: .now))
    }

    /// A read that took a quorum succeeded, and found the store at `seq`.
    func recordQuorum(at instant: ContinuousClock.Instant = .now, seq: UInt64) {
        state.withLock {
            $0.lastQuorum = max($0.lastQuorum, instant)
            $0.lastError = nil
            $0.latestSeq = max($0.latestSeq, seq)
            $0.publication.know(seq, at: .now)
        }
    }

    /// This replica committed up to `seq` in a transaction sent at `sent`: it is to be
    /// published at once, and a majority took it, which is as good a sign of quorum as the
    /// probe's read (a probe slowed by a hung member must not refuse a replica whose commits
    /// go through). Not ``latestSeq``: that stays the probe's own, since a commit that lands
    /// while the probe's read is on its way would make that read look like a seq gone back.
    func recordCommitted(_ seq: UInt64, sentAt sent: ContinuousClock.Instant) {
        state.withLock {
            $0.lastQuorum = max($0.lastQuorum, sent)
            $0.lastError = nil
            $0.publication.know(seq, at: .now)
        }
    }

    /// Every event up to `seq` is published.
    public func recordPublished(_ seq: UInt64) {
        state.withLock { $0.publication.publish(seq) }
    }

    /// How long the first seq known committed after `progress` has waited (zero: none waits);
    /// by default after the last published seq.
    func publicationLag(after progress: UInt64? = nil, now: ContinuousClock.Instant = .now) -> Duration {
        state.withLock { $0.publication.lag(after: progress ?? $0.publication.published, now: now) }
    }

    /// Why heartbeats should stop for a publication that trails, or nil.
    public func publicationSilence(now: ContinuousClock.Instant = .now) -> String? {
        state.withLock { $0.publication.silence(now: now) }
    }

    /// The highest seq a quorum read found: every event up to it is committed.
    var latestSeq: UInt64 { state.withLock { $0.latestSeq } }

    /// A probe failed, for this reason.
    func recordFailure(_ reason: String) {
        state.withLock { $0.lastError = reason }
    }

    /// etcd refused a write because its database is full (alarm NOSPACE), with what to do;
    /// true the first time, so the log says it once.
    func recordNoSpace(_ description: String) -> Bool {
        state.withLock { state in
            let first = state.noSpace == nil
            state.noSpace = description
            return first
        }
    }

    /// A write went through: etcd's database has room again.
    func recordWritable() {
        state.withLock { $0.noSpace = nil }
    }

    /// Why etcd refuses writes for lack of space, when it last did (nil once a write succeeds).
    var noSpace: String? { state.withLock { $0.noSpace } }

    /// The members and leader the probe saw.
    func record(_ cluster: Cluster) {
        state.withLock { $0.cluster = cluster }
    }

    /// The members and leader as last seen.
    var cluster: Cluster { state.withLock { $0.cluster } }

    /// The leader as `status` and the metrics name it at `now`: its name, `none` when no member
    /// named one, and `unknown` while there is no quorum, since the leader last seen may be the
    /// member that went away (a dashboard must not keep showing it as leading).
    func leaderShown(now: ContinuousClock.Instant = .now) -> String {
        guard unavailability(now: now) == nil else { return "unknown" }
        return cluster.leader ?? "none"
    }

    /// A value in the store's log that does not decode, or an event that does not apply to the
    /// list before it, found by whoever read it (a catch-up, the event tail, the service's loop):
    /// the replica cannot go past it, so it stops claiming to be live until a read of the log
    /// gets past it (``recordLogReadable()``).
    public func recordDamage(_ description: String) {
        state.withLock { $0.damage = description }
    }

    /// The log was read past where it was damaged (the value was fixed, or a commit replaced it).
    public func recordLogReadable() {
        state.withLock { $0.damage = nil }
    }

    /// What is damaged in the store's log, or nil.
    public var damage: String? { state.withLock { $0.damage } }

    /// The store this replica serves is not the one at the prefix any more (etcd was restored,
    /// or the prefix rewritten): for good, the replica refuses everything and stops heartbeats
    /// until it is restarted on the store that is there now.
    func recordReplaced(_ description: String) {
        state.withLock { if $0.replaced == nil { $0.replaced = description } }
    }

    /// Why this replica's store is not the one at the prefix any more, or nil.
    var replaced: String? { state.withLock { $0.replaced } }

    /// Why the replica cannot serve changes now (no quorum, or its store was replaced), or nil.
    public func unavailability(now: ContinuousClock.Instant = .now) -> String? {
        let (last, error, replaced) = state.withLock { ($0.lastQuorum, $0.lastError, $0.replaced) }
        if let replaced { return replaced }
        let silence = now - last
        guard silence > quorumTimeout else { return nil }
        let seconds = Double(silence / .milliseconds(1)) / 1000
        return
            "the etcd cluster has no quorum for this replica: no majority answered for \(String(format: "%.1f", seconds)) s"
            + (error.map { " (last error: \($0))" } ?? "")
    }
}
