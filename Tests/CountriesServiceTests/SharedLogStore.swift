import CountriesCore
import Foundation

@testable import CountriesStore

/// One replica's view of a ``SharedLog``; its commits can be told to fail before or after
/// they reach the log. Like ``EtcdStore`` after its lineage check, it refuses everything once
/// the log was restored under it (another store) until the replica is started again.
final class SharedLogStore: StateStore {
    enum Fault { case none, beforeCommit, answerLost }

    let log: SharedLog
    var fault = Fault.none
    /// How many times the handler asked for a catch-up, and for a commit: each is a round trip
    /// to etcd on a replica.
    private(set) var catchUps = 0
    private(set) var commits = 0
    /// Whether a catch-up fails, as one from a member that lags does.
    var catchUpFails = false
    /// The store it opened; the log may since have become another.
    let identity: String
    var path: String { "shared" }
    var sizeOnDisk: Int { 0 }
    var isShared: Bool { true }
    var maximumChangesPerCommit: Int { 4 }

    init(log: SharedLog) {
        self.log = log
        identity = log.identity
    }

    var unavailability: String? {
        log.identity == identity
            ? nil : "the store was replaced (etcd was restored to a snapshot); start this replica again"
    }

    private func checkLineage() throws(StateStoreError) {
        if let unavailability { throw StateStoreError(unavailability) }
    }

    func loadState() throws(StoreOpenError) -> CountriesState {
        do {
            return try log.state(upTo: log.seq)
        } catch {
            throw StoreOpenError(.corrupt, path: path, "\(error)")
        }
    }

    func catchUp(_ state: CountriesState) throws(StateStoreError) -> CountriesState {
        catchUps += 1
        try checkLineage()
        if catchUpFails { throw StateStoreError("etcd's answers end behind the seq this replica knows") }
        var state = state
        for event in log.events where event.seq > state.seq {
            do { try state.replay(event) } catch { throw StateStoreError("\(error)") }
        }
        return state
    }

    func rememberedRequest(for id: String) throws(StateStoreError) -> RememberedRequest? {
        try checkLineage()
        return log.requests[id]
    }

    func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(StateStoreError) -> [Event]? {
        try checkLineage()
        return Array(log.events.filter { $0.seq > since && $0.seq <= currentSeq }.prefix(limit))
    }

    func oldestRetainedSeq(currentSeq: UInt64) throws(StateStoreError) -> UInt64 { 1 }

    func commit(_ batch: StoreBatch) throws(StateStoreError) {
        commits += 1
        try checkLineage()
        switch fault {
        case .beforeCommit: throw StateStoreError("the etcd cluster has no quorum", code: .noQuorum)
        case .answerLost:
            if log.commit(batch) == nil {
                throw StateStoreError("etcd did not answer", code: .outcomeUnknown)
            }
            throw StateStoreError(
                "moved", code: .moved,
                remembered: (batch.requests.map(\.id) + batch.checkedIDs).compactMap { log.requests[$0] })
        case .none:
            if let found = log.commit(batch) {
                // As etcd's refusal does: the events that moved the store past the basis.
                throw StateStoreError(
                    "another replica committed first", code: .moved, remembered: found,
                    newerEvents: log.events.filter { $0.seq > batch.basis })
            }
        }
    }
}
