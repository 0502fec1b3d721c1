import Etcd
import Foundation
import TestSupport
import Testing

/// Watches against a real etcd: order, stopping, compaction.
@Suite(.enabled(if: EtcdCluster.isAvailable, "etcd is not installed (scripts/bootstrap)"))
struct EtcdWatcherTests {
    @Test func aWatchGetsEveryChangeInOrderFromItsStartRevision() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        var first: Int64 = 0
        for index in 0..<5 {
            let revision = try client.txn(
                compare: [], success: [.put("w/\(index)", Data([UInt8(index), 0xFF]))], failure: []
            )
            .revision
            if index == 0 { first = revision }
        }
        _ = try client.txn(compare: [], success: [.put("other", Data())], failure: [])
        let watcher = EtcdWatcher(endpoints: cluster.clientURLs)
        var seen: [EtcdWatchEvent] = []
        var wroteLive = false
        let deadline = ContinuousClock.now + .seconds(5) * testSlowdown
        let stop = { ContinuousClock.now > deadline }
        try watcher.watch(.prefix("w/"), startRevision: first, shouldStop: stop) { events, revision in
            seen += events
            #expect(events.allSatisfy { $0.kv.modRevision <= revision })
            if !wroteLive {
                // Changes made while the stream is open come after the history.
                wroteLive = true
                _ = try? client.txn(
                    compare: [], success: [.deleteRange(key: "w/0", rangeEnd: nil)], failure: [])
            }
            return seen.count < 6
        }
        #expect(seen.count == 6)
        #expect(seen.map(\.kv.key) == ["w/0", "w/1", "w/2", "w/3", "w/4", "w/0"])
        #expect(seen.map(\.kv.modRevision) == seen.map(\.kv.modRevision).sorted())
        #expect(seen.prefix(5).allSatisfy { $0.kind == .put } && seen.last?.kind == .delete)
        #expect(seen[3].kv.value == Data([3, 0xFF]))
    }

    @Test func aSilentWatchStopsSoonAfterItIsAskedTo() throws {
        let cluster = try EtcdCluster(members: 1)
        let watcher = EtcdWatcher(endpoints: cluster.clientURLs)
        let clock = ContinuousClock()
        let started = clock.now
        let stopAt = started + .milliseconds(500)
        var asked = 0
        let stop = {
            asked += 1
            return clock.now >= stopAt
        }
        try watcher.watch(EtcdRangeRequest(key: "quiet"), startRevision: 0, shouldStop: stop) { _, _ in
            Issue.record("a silent key had events")
            return true
        }
        let late = clock.now - stopAt
        #expect(late < .milliseconds(300) * testSlowdown, "returned \(late) after shouldStop turned true")
        #expect(asked >= 4, "shouldStop was asked \(asked) times in 500 ms")
    }

    @Test func aWatchFromACompactedRevisionThrowsCompacted() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        var revision: Int64 = 0
        for index in 0..<4 {
            revision = try client.txn(compare: [], success: [.put("c", Data("\(index)".utf8))], failure: [])
                .revision
        }
        try cluster.compact(to: revision)
        let watcher = EtcdWatcher(endpoints: cluster.clientURLs)
        let deadline = ContinuousClock.now + .seconds(5) * testSlowdown
        do {
            let stop = { ContinuousClock.now > deadline }
            try watcher.watch(EtcdRangeRequest(key: "c"), startRevision: 2, shouldStop: stop) { _, _ in true }
            Issue.record("a watch from a compacted revision went on")
        } catch {
            #expect(error.code == .compacted && error.compactRevision == revision, "\(error)")
        }
    }
}
