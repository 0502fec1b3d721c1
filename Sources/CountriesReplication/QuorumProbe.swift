import Etcd
import Foundation
import SystemSupport

/// Asks the etcd cluster, on a thread of its own, for a read that takes a quorum (the `seq`
/// key, linearizable) every ``interval``, and for its members and leader every few rounds, and
/// records what it saw in a ``ClusterHealth``. A replica whose probe has no answer for the
/// health's quorum timeout stops heartbeating and refuses changes (docs/HA.md, "Losing the
/// quorum"); it recovers by itself at the next answer. It also tries again, with a short
/// timeout, each member the replica's connections avoid, so one that answers is used again.
public final class QuorumProbe: Sendable {
    /// How often the probe reads.
    let interval: Duration
    /// How long a recheck of an avoided member may take: a member that answers at all answers
    /// a read in milliseconds.
    static let recheckTimeout: Duration = .milliseconds(250)

    private let endpoints: [String]
    private let layout: EtcdLayout
    private let requestTimeout: Duration
    private let security: EtcdSecurity
    /// The identity of the store this replica serves.
    private let identity: String
    private let health: ClusterHealth
    private let logger: Logger
    private let worker = WorkerThread(name: "etcd probe")

    /// A probe of the cluster in `configuration` every `interval`, recording into `health`;
    /// ``start()`` starts it.
    public init(
        configuration: EtcdConfiguration, identity: String, health: ClusterHealth, interval: Duration,
        logger: Logger
    ) {
        self.identity = identity
        endpoints = configuration.endpoints
        layout = EtcdLayout(prefix: configuration.prefix)
        requestTimeout = configuration.requestTimeout
        security = configuration.security
        self.health = health
        self.interval = interval
        self.logger = logger
    }

    /// Starts the thread.
    public func start() {
        worker.start { [self] in probe() }
    }

    /// Stops the thread and waits for it (at most about a request timeout).
    public func stop() {
        worker.stop()
    }

    private var isStopping: Bool { worker.isStopping }

    private func probe() {
        let client = EtcdClient(
            endpoints: endpoints, timeout: requestTimeout, security: security, memberHealth: health.members)
        var round = 0
        var hadQuorum = true
        var floor = RevisionFloor()
        var seenMark: Int64?
        var staleReads = 0
        while !isStopping {
            let started = ContinuousClock.now
            do {
                let found = try client.range(EtcdRangeRequest(key: layout.seq))
                let seq = found.kvs.first.flatMap { UInt64(String(decoding: $0.value, as: UTF8.self)) } ?? 0
                let latest = health.latestSeq
                if floor.judge(found.revision) == .stale {
                    // Not the store going back, and no sign of quorum either: the next read tells.
                    staleReads += 1
                    if staleReads == 1 || staleReads.isMultiple(of: 100) {
                        logger.log(
                            .warning,
                            "etcd answered a read of \(layout.seq) from revision \(found.revision) (seq \(seq)), before revision \(floor.highest) this replica had read: ignored as stale (\(staleReads) so far)"
                        )
                    }
                } else {
                    if seq < latest, health.replaced == nil {
                        // A seq never goes back: the store here is not the one this replica served.
                        var verdict = try StoreLineage.check(
                            client: client, layout: layout, identity: identity, seenMark: &seenMark)
                        if verdict == .continuous {
                            verdict = try StoreLineage.replace(
                                identity, client: client, layout: layout,
                                why:
                                    "the store's seq went back from \(latest) to \(seq): etcd was restored from a snapshot, or the prefix rewritten"
                            )
                        }
                        report(verdict)
                    }
                    health.recordQuorum(at: started, seq: seq)
                }
                if !hadQuorum {
                    logger.log(.info, "the etcd cluster answers again through \(client.currentEndpoint)")
                }
                hadQuorum = true
            } catch {
                health.recordFailure("\(error)")
                if hadQuorum { logger.log(.warning, "no quorum read from the etcd cluster: \(error)") }
                hadQuorum = false
            }
            if round % 5 == 0 {
                health.record(cluster(client))
                if health.replaced == nil,
                    let verdict = try? StoreLineage.check(
                        client: client, layout: layout, identity: identity, seenMark: &seenMark)
                {
                    report(verdict)
                }
            }
            client.recheckAvoided(EtcdRangeRequest(key: layout.seq), timeout: Self.recheckTimeout)
            round += 1
            worker.pause(for: started + interval - ContinuousClock.now)
        }
    }

    /// Records a store replaced at the prefix: this replica then refuses everything and stops
    /// heartbeats, for good (docs/HA.md, "Backup and restore").
    private func report(_ verdict: StoreLineage.Verdict) {
        guard case .replaced(let current, let why) = verdict else { return }
        let description =
            "\(why); the store at \(layout.prefix) is now \(current.isEmpty ? "unknown" : current), a new store (subscribers start over), while this replica served \(identity): restart it"
        health.recordReplaced(description)
        logger.log(.error, description)
    }

    /// The members and leader, as far as they can be read now.
    private func cluster(_ client: EtcdClient) -> ClusterHealth.Cluster {
        guard let members = try? client.members() else { return health.cluster }
        let leaderID = try? client.status(of: client.currentEndpoint).leaderID
        var cluster = ClusterHealth.Cluster()
        cluster.members = members.map { "\($0.name)=\($0.clientURLs.first ?? "?")" }
        cluster.leader = members.first { $0.id == leaderID }?.name
        return cluster
    }
}
