import CountriesCore
import Foundation

/// Runs changes on a working copy of the state: the one place an outcome is decided, as a
/// plain function of the state, the change and the store it is for. Whether that outcome
/// stands is the commit path's to say (``CommitPath``): it is decided again, here, on a newer
/// state when a shared store moved under the batch.
struct BatchStager {
    /// The store's identity: stamped on events and replies, and compared with `if_store`.
    let identity: String
    /// The list `reset` goes back to.
    let seed: [Country]

    /// Runs `change` on `working` and returns it staged (its refusal, when it is refused).
    func stage(
        _ change: Change, id: String?, ifStore: String?, envelope: [Data],
        on working: inout CountriesState
    ) -> StagedChange {
        if let ifStore, ifStore != identity {
            var refusal = Reply(
                error: CountriesError(
                    .conflict,
                    "this change is for store \(CountryName.quoted(ifStore)), but the service runs on store \(identity) (a different store: its seqs mean other changes); take a fresh list"
                ))
            // Names the store it runs on, so a client of several endpoints can tell an endpoint
            // of another store from a refusal of its change (docs/PROTOCOL.md, "Outcomes").
            refusal.store = identity
            return StagedChange(
                envelope: envelope, id: id, change: change, ifStore: ifStore, reply: refusal,
                event: nil)
        }
        do throws(CountriesError) {
            // Stamped in place and handed on: copies of the reply and the event cost about 500
            // instructions a change (docs/BENCHMARKS.md, "Stop 59").
            var result = try working.apply(change, seed: seed)
            result.event?.store = identity
            // A seq means something only within one store: the reply says which (v1.3).
            result.reply.store = identity
            return StagedChange(
                envelope: envelope, id: id, change: change, ifStore: ifStore, reply: result.reply,
                event: result.event)
        } catch {
            return StagedChange(
                envelope: envelope, id: id, change: change, ifStore: ifStore,
                reply: Reply(error: error), event: nil)
        }
    }
}
