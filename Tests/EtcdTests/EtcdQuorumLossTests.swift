import Etcd
import Foundation
import TestSupport
import Testing

/// Two members of three killed: what the survivor's reads, txns and watch come to.
@Suite(.enabled(if: EtcdCluster.isAvailable, "etcd is not installed (scripts/bootstrap)"))
struct EtcdQuorumLossTests {
    @Test func withoutQuorumCallsFailWithinTheTimeoutAndTheWatchEnds() throws {
        let cluster = try EtcdCluster(members: 3)
        let survivor = cluster.clientURLs[0]
        let client = EtcdClient(endpoints: [survivor], timeout: .seconds(1))
        _ = try client.txn(compare: [], success: [.put("k", Data("v".utf8))], failure: [])

        // A watch on the survivor, on a thread of its own.
        let outcome = Box<String?>(nil)
        let stop = Box(false)
        let watching = Thread {
            let watcher = EtcdWatcher(endpoints: [survivor])
            do {
                let stopped = { stop.value }
                try watcher.watch(EtcdRangeRequest(key: "k"), startRevision: 0, shouldStop: stopped) { _, _ in
                    true
                }
                outcome.value = "stopped"
            } catch {
                outcome.value = (error as? EtcdError).map { "\($0.code)" } ?? "\(error)"
            }
        }
        watching.start()
        defer {
            stop.value = true
            _ = eventually(within: .seconds(2)) { outcome.value != nil }
        }
        sleep(for: .milliseconds(300))
        let clock = ContinuousClock()
        let killed = clock.now
        cluster.kill(member: 1)
        cluster.kill(member: 2)

        // Ended by the member once it knows it has no leader (hasleader), not silent.
        #expect(eventually(within: .seconds(5), every: .milliseconds(20)) { outcome.value != nil })
        #expect(outcome.value == "noQuorum", "the watch ended with \(outcome.value ?? "nothing")")
        let watchEnded = clock.now - killed

        var started = clock.now
        do {
            _ = try client.range(EtcdRangeRequest(key: "k"))
            Issue.record("a linearizable read without quorum answered")
        } catch {
            print("quorum lost: range \(error) after \((clock.now - started).milliseconds) ms")
            #expect(error.code == .noQuorum || error.code == .outcomeUnknown, "\(error)")
        }
        #expect(clock.now - started < .milliseconds(1500) * testSlowdown)
        started = clock.now
        do {
            _ = try client.txn(compare: [], success: [.put("k", Data("w".utf8))], failure: [])
            Issue.record("a txn without quorum answered")
        } catch {
            print("quorum lost: txn \(error) after \((clock.now - started).milliseconds) ms")
            #expect(error.code == .noQuorum || error.code == .outcomeUnknown, "\(error)")
        }
        #expect(clock.now - started < .milliseconds(1500) * testSlowdown)
        // The member's own copy still reads, and its status says it knows no leader.
        let local = try client.range(EtcdRangeRequest(key: "k", serializable: true))
        #expect(local.kvs.first?.value == Data("v".utf8))
        #expect(eventually(within: .seconds(3)) { (try? client.status(of: survivor))?.leaderID == 0 })
        print("quorum lost: watch ended \(watchEnded.milliseconds) ms after the kill")

        // Quorum back: the same client works again.
        try cluster.restart(member: 1)
        #expect(
            eventually(within: .seconds(5), every: .milliseconds(100)) {
                (try? client.range(EtcdRangeRequest(key: "k"))) != nil
            })
    }
}
