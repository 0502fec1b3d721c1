import Etcd
import Foundation
import TestSupport
import Testing

@testable import CountriesReplication
@testable import CountriesStore

/// The lineage mark against a real etcd: it goes on through writes and compactions, and a
/// restore from a snapshot (same cluster and member ids) gives the store a new identity, once.
@Suite(
    .hangGuard(),
    .enabled(if: EtcdCluster.isAvailable, "etcd is not installed (scripts/bootstrap)"))
struct StoreLineageTests {
    /// A status taken while etcd applies an entry (its revision bumped, its applied index not
    /// yet) is one below the true difference: not a restore. Below that, it is.
    @Test func aStatusOneBelowTheMarkIsAnEntryBeingAppliedNotARestore() {
        #expect(!StoreLineage.historyWentBack(statusDifference: 40, recorded: 40))
        #expect(!StoreLineage.historyWentBack(statusDifference: 41, recorded: 40))
        #expect(!StoreLineage.historyWentBack(statusDifference: 39, recorded: 40), "an entry in flight")
        #expect(StoreLineage.historyWentBack(statusDifference: 38, recorded: 40))
        #expect(StoreLineage.historyWentBack(statusDifference: -120, recorded: 40), "a restore")
        // A mark read from etcd may be anything; the lowest one trapped.
        #expect(!StoreLineage.historyWentBack(statusDifference: 0, recorded: .min))
    }

    @Test func aRestoreIsCaughtAndTheStoreGetsANewIdentityOnce() throws {
        let cluster = try EtcdCluster(members: 1)
        let layout = EtcdLayout(prefix: "/countries/")
        let client = EtcdClient(endpoints: cluster.clientURLs, timeout: .seconds(5))
        let identity = StoreIdentity.make()
        _ = try client.txn(compare: [], success: [.put(layout.store, Data(identity.utf8))], failure: [])
        func write(_ count: Int) throws {
            for index in 0..<count {
                _ = try client.txn(
                    compare: [], success: [.put(layout.seq, Data("\(index)".utf8))], failure: [])
            }
        }
        #expect(try StoreLineage.check(client: client, layout: layout, identity: identity) == .continuous)
        try write(20)
        let compacted = try client.range(EtcdRangeRequest(key: layout.seq)).revision
        try cluster.compact(to: compacted)
        #expect(try StoreLineage.check(client: client, layout: layout, identity: identity) == .continuous)
        let mark = try client.range(EtcdRangeRequest(key: layout.lineage)).kvs.first?.value
        #expect(mark != nil, "no mark was recorded")

        let scratch = try ScratchDirectory(prefix: "lineage")
        try cluster.saveSnapshot(to: scratch.file("snapshot.db"))
        try write(10)
        #expect(try StoreLineage.check(client: client, layout: layout, identity: identity) == .continuous)
        // Another replica, running through it all, has seen the mark of the history to come.
        var runningSeen: Int64?
        #expect(
            try StoreLineage.check(client: client, layout: layout, identity: identity, seenMark: &runningSeen)
                == .continuous)
        try cluster.restore(from: scratch.file("snapshot.db"))

        // The restored store looks the same (identity, keys) but its raft log is new.
        #expect(try client.range(EtcdRangeRequest(key: layout.store)).kvs.first?.value == Data(identity.utf8))
        let verdict = try StoreLineage.check(client: client, layout: layout, identity: identity)
        guard case .replaced(let current, let why) = verdict else {
            Issue.record("the restore was not caught: \(verdict)")
            return
        }
        #expect(StoreIdentity.isWellFormed(current) && current != identity)
        #expect(why.contains("restored from a snapshot"))
        #expect(try client.range(EtcdRangeRequest(key: layout.store)).kvs.first?.value == Data(current.utf8))
        // The running replica, checking after the first one replaced the store, finds the new
        // identity under the new history's mark, and its own mark still says why.
        let running = try StoreLineage.check(
            client: client, layout: layout, identity: identity, seenMark: &runningSeen)
        guard case .replaced(current, let runningWhy) = running else {
            Issue.record("the running replica did not see the store replaced: \(running)")
            return
        }
        #expect(runningWhy.contains("restored from a snapshot"), "\(runningWhy)")
        #expect(runningWhy.hasSuffix("the key /countries/store now holds \(current) instead of \(identity)"))
        // A replica that checks with the old identity and no mark of its own finds the one the
        // first chose, and no more.
        #expect(
            try StoreLineage.check(client: client, layout: layout, identity: identity)
                == .replaced(
                    current: current,
                    why: "the key /countries/store now holds \(current) instead of \(identity)"))
        // And the new store's history goes on from here.
        try write(5)
        #expect(try StoreLineage.check(client: client, layout: layout, identity: current) == .continuous)
    }
}
