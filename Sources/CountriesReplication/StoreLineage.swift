import CountriesStore
import Etcd
import Foundation

/// Catches an etcd restored from a snapshot (docs/HA.md, "Backup and restore"). A restore keeps
/// the keys with their revisions, and may keep the cluster and member ids, so the store at the
/// prefix looks the same, seqs and all, only older: the changes after the snapshot are gone, and
/// new ones would be numbered again, two changes under one (store, seq). What a restore cannot
/// keep is the raft log: it starts a new one, so a member's `raftAppliedIndex - revision`,
/// which never decreases in a cluster's life (every revision is an entry, and compactions,
/// membership and auth are entries without one), drops.
///
/// Replicas record a lower bound of that difference in the `lineage` key; a replica that finds
/// the member below the mark (at start, or its probe later) gives the store a new identity, by
/// compare-and-swap so only one replica does: subscribers then start over, and the numbers
/// after the restore belong to another store.
enum StoreLineage {
    /// What a check found.
    enum Verdict: Equatable {
        /// The history goes on; the mark was recorded or raised if it had to be.
        case continuous
        /// The store at the prefix is another one now (`current`: the identity it holds), and why.
        case replaced(current: String, why: String)
    }

    /// Compares the member's history with the recorded mark. Records a higher mark when there
    /// is one to record; when history went back, replaces `identity` by a new one (unless
    /// another replica already did) and says so.
    static func check(client: EtcdClient, layout: EtcdLayout, identity: String) throws(EtcdError) -> Verdict {
        var seenMark: Int64?
        return try check(client: client, layout: layout, identity: identity, seenMark: &seenMark)
    }

    /// ``check(client:layout:identity:)`` for a replica that checks again and again: `seenMark`
    /// keeps the highest mark it has seen under `identity`. The replica that first catches a
    /// restore records the new history's mark, so another replica, checking later, finds the
    /// key holding a new identity under a mark it could not tell from the old one; its own mark
    /// still tells it that the history went back, and the verdict says so.
    static func check(
        client: EtcdClient, layout: EtcdLayout, identity: String, seenMark: inout Int64?
    ) throws(EtcdError) -> Verdict {
        // A linearizable read first: the member that answers it has applied at least every
        // entry committed before, the mark's own write included, so the status asked of it next
        // is not of a member behind the mark. The status's difference is at least the member's
        // true one (etcd reads the revision before the applied index) but for the one entry
        // being applied (``historyWentBack(statusDifference:recorded:)``), so an etcd that was
        // not restored is never more than one below the mark.
        let read = try client.txn(
            compare: [],
            success: [
                .range(EtcdRangeRequest(key: layout.lineage)), .range(EtcdRangeRequest(key: layout.store)),
            ],
            failure: [])
        let status = try client.status(of: client.currentEndpoint)
        func value(_ index: Int) -> Data? {
            guard index < read.results.count, case .range(let range) = read.results[index] else { return nil }
            return range.kvs.first?.value
        }
        let recordedValue = value(0)
        let recorded = recordedValue.flatMap { Int64(String(decoding: $0, as: UTF8.self)) }
        let storeValue = value(1).map { String(decoding: $0, as: UTF8.self) }
        let applied = Int64(clamping: status.raftAppliedIndex)
        let upperBound = applied - status.revision
        // The applied index less a revision read after it is at most the true difference: the
        // mark never claims more history than there is.
        func lowerBound() throws(EtcdError) -> Int64 {
            applied - (try client.range(EtcdRangeRequest(key: layout.seq, countOnly: true)).revision)
        }
        let highest = [recorded, seenMark].compactMap { $0 }.max()
        let restored = highest.flatMap { highest in
            historyWentBack(statusDifference: upperBound, recorded: highest)
                ? "etcd's history went back (applied raft index less revision is \(upperBound), below the \(highest) recorded): etcd was restored from a snapshot, and the changes after it are gone"
                : nil
        }
        guard storeValue == identity else {
            let replaced =
                "the key \(layout.store) now holds \(storeValue ?? "nothing") instead of \(identity)"
            return .replaced(
                current: storeValue ?? "", why: restored.map { "\($0); \(replaced)" } ?? replaced)
        }
        if let restored {
            return try replace(
                identity, client: client, layout: layout, newMark: try lowerBound(), why: restored)
        }
        let mark = try lowerBound()
        // A lower bound of this history's difference, whether or not it is the one recorded.
        seenMark = max(mark, highest ?? mark)
        if recorded.map({ mark > $0 }) ?? true {
            let keepsMark: EtcdCompare =
                recordedValue.map { .value(layout.lineage, equals: $0) }
                ?? .createRevision(layout.lineage, equals: 0)
            _ = try client.txn(
                compare: [.value(layout.store, equals: Data(identity.utf8)), keepsMark],
                success: [.put(layout.lineage, Data(String(mark).utf8))], failure: [])
        }
        return .continuous
    }

    /// Whether a member's status, `raftAppliedIndex - revision` as `statusDifference`, shows a
    /// history that went back below the `recorded` mark.
    ///
    /// One entry below is not a restore: etcd bumps the revision while it applies an entry and
    /// sets the applied index once the entry is applied, so a status taken in between (a busy
    /// cluster: CI saw one, and the replica gave a live store a new identity) is one below the
    /// true difference. Entries are applied one at a time, so never more. A restore drops the
    /// difference by the whole raft log the snapshot's members had, well past one.
    static func historyWentBack(statusDifference: Int64, recorded: Int64) -> Bool {
        // A mark read from etcd may be anything: at Int64.min, `recorded - 1` trapped.
        let (limit, overflow) = recorded.subtractingReportingOverflow(1)
        return !overflow && statusDifference < limit
    }

    /// Gives the store at the prefix a new identity in place of `identity`, unless another
    /// replica already did (then the verdict names the one it chose); with `newMark`, the
    /// lineage mark of the history from here on.
    static func replace(
        _ identity: String, client: EtcdClient, layout: EtcdLayout, newMark: Int64? = nil, why: String
    ) throws(EtcdError) -> Verdict {
        let replacement = StoreIdentity.make()
        var success: [EtcdOperation] = [.put(layout.store, Data(replacement.utf8))]
        if let newMark { success.append(.put(layout.lineage, Data(String(newMark).utf8))) }
        let swapped = try client.txn(
            compare: [.value(layout.store, equals: Data(identity.utf8))],
            success: success, failure: [.range(EtcdRangeRequest(key: layout.store))])
        if swapped.succeeded { return .replaced(current: replacement, why: why) }
        guard case .range(let range)? = swapped.results.first, let value = range.kvs.first?.value else {
            return .replaced(current: "", why: why)
        }
        return .replaced(current: String(decoding: value, as: UTF8.self), why: why)
    }
}
