import CountriesCore
import Foundation

/// A read held in a batch until the next commit: answering it where it came would have ended
/// the grouped commit before it (a read sees the changes before it only once they are
/// committed) or, on a shared store, read the store first to be sure of the latest state. After
/// the commit it is answered from the committed state, which the commit's compare vouches for
/// (docs/HA.md, "Reads"). Its reply then shows the batch's changes after it too: they came
/// before its answer, as concurrent requests may.
struct HeldRead {
    /// What a read asks.
    enum Kind {
        case query(Query)
        case history(since: UInt64)
        case status

        /// Whether the commit path must vouch for the state first (``CommitPath/prepareRead(_:)``):
        /// every read of the list does; `status` describes the replica as it is.
        var needsPreparing: Bool {
            if case .status = self { return false }
            return true
        }
    }

    let kind: Kind
    /// Where the reply goes; its peer's later requests are not answered before it.
    let envelope: [Data]
    let trace: RequestTrace
}
