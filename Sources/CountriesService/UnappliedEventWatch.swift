import CountriesCore
import CountriesReplication
import SystemSupport

/// The tail's events that are no change of the list before them, and the damage they stand for
/// (docs/HA.md, "Failures"). No commit wrote such an event (each is decided on that list), so
/// it is not published, and it stays damage, which holds heartbeats, until the replica's state
/// is past it: the tail clears damage whenever it reads the log again and finds its values
/// whole, and that does not make the event apply.
struct UnappliedEventWatch {
    private let health: ClusterHealth
    private let logger: Logger
    /// The last event that did not apply, and how its damage reads.
    private var unapplied: (seq: UInt64, damage: String)?

    /// A watch that records damage in `health` and says so in `logger`.
    init(health: ClusterHealth, logger: Logger) {
        self.health = health
        self.logger = logger
    }

    /// Whether `event` may be published: yes when `mismatch` is nil (the replica's state took it
    /// as a change of the list before it); otherwise, why not is recorded as damage.
    mutating func mayPublish(_ event: Event, mismatch: String?) -> Bool {
        guard let mismatch else { return true }
        let damage =
            "event \(event.seq) in etcd does not apply to the list at seq \(event.seq - 1) (\(mismatch)): not published; rewrite or remove it, and check who can write to etcd (docs/HA.md, \"Failures\")"
        if health.damage != damage { logger.log(.error, damage) }
        health.recordDamage(damage)
        unapplied = (event.seq, damage)
        return false
    }

    /// Clears the damage once the replica's state, at `stateSeq`, is past the event that did not
    /// apply (a read or a change caught up), and records it again while it is not. Call it on
    /// each turn of the loop.
    mutating func check(stateSeq: UInt64) {
        guard let (seq, damage) = unapplied else { return }
        if stateSeq >= seq {
            unapplied = nil
            health.recordLogReadable()
            logger.log(.info, "the event log applies again past seq \(seq)")
        } else if health.damage == nil {
            health.recordDamage(damage)
        }
    }
}
