import CountriesCore
import Foundation

@testable import CountriesStore

/// One log shared by several replicas' stores: what etcd holds for a prefix, with the same
/// compare-and-swap rule as ``EtcdStore/commit(_:)`` (the seq must still be the batch's basis,
/// and none of its ids remembered yet). It can be saved and restored, as `etcdctl snapshot`
/// does: a restored log is another store, with another identity (docs/HA.md, "Failures").
final class SharedLog {
    /// What a saved copy holds.
    struct Snapshot {
        var events: [Event]
        var requests: [String: RememberedRequest]
    }

    private(set) var identity = "0123456789abcdef0123456789abcdef"
    let seed: [Country]
    private(set) var events: [Event] = []
    private(set) var requests: [String: RememberedRequest] = [:]
    /// Every store this log has been, oldest first, with the events each one held last.
    private(set) var retired: [(identity: String, events: [Event])] = []
    var seq: UInt64 { events.last?.seq ?? 0 }

    init(seed: [Country]) {
        self.seed = seed
    }

    func state(upTo seq: UInt64) throws -> CountriesState {
        var state = CountriesState(countries: seed)
        for event in events where event.seq <= seq { try state.replay(event) }
        return state
    }

    /// Writes `batch` if it still applies and none of its ids (its changes' and the ids it only
    /// checks, of refusals and no-ops) is remembered; else the ids found remembered.
    func commit(_ batch: StoreBatch) -> [RememberedRequest]? {
        let found = (batch.requests.map(\.id) + batch.checkedIDs).compactMap { requests[$0] }
        guard batch.basis == seq, found.isEmpty else { return found }
        events += batch.events
        for request in batch.requests { requests[request.id] = request }
        return nil
    }

    /// Forgets every remembered request id: a broken store, for showing that the checks bite.
    func forgetRequests() { requests = [:] }

    /// A copy of what the log holds now.
    func save() -> Snapshot { Snapshot(events: events, requests: requests) }

    /// Puts the log back to `snapshot` as the store `identity`: what was written since is gone.
    func restore(_ snapshot: Snapshot, as identity: String) {
        retired.append((self.identity, events))
        self.identity = identity
        events = snapshot.events.map { event in
            var event = event
            event.store = identity
            return event
        }
        requests = snapshot.requests
    }

    /// Every store's events, the current one last.
    var histories: [(identity: String, events: [Event])] { retired + [(identity, events)] }
}
