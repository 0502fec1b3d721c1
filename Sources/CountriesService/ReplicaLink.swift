import CountriesCore
import CountriesReplication
import SystemSupport
import ZeroMQ

/// A replica's link to etcd and to the other replicas (docs/HA.md): the event tail it publishes
/// from, the quorum probe its heartbeats depend on, the election of the one writer, and the
/// forwarder that hands changes to it. Each runs on a thread of its own (the forwarder is a
/// socket the loop polls); the link starts them together and stops them in the order a clean
/// hand-over needs.
final class ReplicaLink {
    /// The committed events, read from etcd's log: what the replica publishes.
    let tail: EventTail
    /// Watches etcd's quorum and the store's identity.
    let probe: QuorumProbe
    /// What the tail, the probe and the store found of the cluster: when to hold heartbeats.
    let health: ClusterHealth
    /// Which replica writes, by etcd's lease.
    let election: WriterElectionRunner
    /// Hands this replica's changes to the writer while it is a follower.
    let forwarder: ChangeForwarder
    /// The tail's events that did not apply to the list before them.
    private var unapplied: UnappliedEventWatch

    /// Sets up a replica of the store `etcd` names, whose state is at `loadedSeq`, advertising
    /// `commandEndpoint` for other replicas to forward to. Nothing runs before ``start()``.
    init(
        etcd: EtcdConfiguration, health: ClusterHealth, loadedSeq: UInt64, seed: [Country],
        storeIdentity: String, probeInterval: Duration, commandEndpoint: String, context: Context,
        security: ServerSecurity?, logger: Logger
    ) throws {
        self.health = health
        unapplied = UnappliedEventWatch(health: health, logger: logger)
        tail = try EventTail(
            configuration: etcd, after: loadedSeq, seed: seed, health: health, logger: logger)
        probe = QuorumProbe(
            configuration: etcd, identity: storeIdentity, health: health, interval: probeInterval,
            logger: logger)
        election = WriterElectionRunner(
            configuration: etcd, endpoint: commandEndpoint, memberHealth: health.members, logger: logger)
        forwarder = try ChangeForwarder(context: context, security: security, logger: logger)
    }

    /// Starts the tail, the probe and the election.
    func start() {
        tail.start()
        probe.start()
        election.start()
    }

    /// Stops them all: the election first, so its lease is revoked and another replica becomes
    /// the writer at once.
    func stop() {
        election.stop()
        forwarder.close()
        tail.stop()
        probe.stop()
    }

    /// Publishes what the tail read, in order, through `publish`. `observe` takes each event
    /// into the replica's state and says why one is no change of the list before it; such an
    /// event is not published, and is damage until the state gets past it
    /// (``UnappliedEventWatch``, ``checkUnapplied(stateSeq:)``).
    func publishTail(observing observe: (Event) -> String?, publish: (EventTail.Entry) -> Void) {
        for entry in tail.drain() where unapplied.mayPublish(entry.event, mismatch: observe(entry.event)) {
            publish(entry)
        }
    }

    /// Keeps the damage of an event that did not apply until the state, at `stateSeq`, is past
    /// it. Call it on each turn of the loop.
    func checkUnapplied(stateSeq: UInt64) {
        unapplied.check(stateSeq: stateSeq)
    }

    /// Whether this replica hands its changes to another (it neither commits nor waits for a
    /// cohort of its own).
    var isFollower: Bool {
        if case .follower = election.role() { return true }
        return false
    }

    /// Why heartbeats are held at `now` (no quorum, a damaged log, or publication trailing what
    /// is known to be committed), or nil when the replica may vouch for its last seq.
    func heartbeatHold(now: ContinuousClock.Instant = .now) -> String? {
        health.unavailability(now: now) ?? health.damage ?? health.publicationSilence(now: now)
    }
}

@available(*, unavailable) extension ReplicaLink: Sendable {}
