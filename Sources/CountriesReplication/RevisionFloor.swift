/// Tells a read answered from behind what a reader has already seen (a member that lags, which
/// etcd 3.4 was seen to do here under load even for a linearizable read: the seq one commit
/// back, after a read had returned it) from the store really going back. etcd's revision never
/// goes back but in a restore, so a read below the highest revision seen is stale, unless the
/// reads stay there (``readsBeforeBelieved`` in a row): then the store went back, and the
/// caller judges it as before (docs/HA.md, "Backup and restore").
struct RevisionFloor: Equatable, Sendable {
    /// What a read is, by its header revision.
    enum Verdict: Equatable, Sendable {
        /// At or past every revision read before.
        case current
        /// Below one read before: ignore what it says.
        case stale
        /// Below, again and again: the store's history went back.
        case wentBack
    }

    /// How many reads in a row below the highest revision make it believed.
    static let readsBeforeBelieved = 3

    /// The highest revision read so far.
    private(set) var highest: Int64 = 0
    private var behindInARow = 0

    /// Judges a read at header revision `revision`, and remembers it.
    mutating func judge(_ revision: Int64) -> Verdict {
        if revision >= highest {
            highest = revision
            behindInARow = 0
            return .current
        }
        behindInARow += 1
        guard behindInARow >= Self.readsBeforeBelieved else { return .stale }
        highest = revision
        behindInARow = 0
        return .wentBack
    }
}
