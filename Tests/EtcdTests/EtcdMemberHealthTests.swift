import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import Etcd

/// A member that hangs (SIGSTOP: it still accepts TCP connections, so connecting succeeds and
/// requests hang) is left within a second, avoided by every connection that shares the record,
/// and used again once it answers a recheck. The member stopped is a follower: with the leader
/// stopped, every request waits for an election first.
@Suite(.serialized, .enabled(if: EtcdCluster.isAvailable, "etcd is not installed (scripts/bootstrap)"))
struct EtcdMemberHealthTests {
    @Test func aSilentMemberIsAvoidedUntilItAnswersARecheck() {
        let health = EtcdMemberHealth(recheckAfter: .milliseconds(100))
        let endpoints = ["http://a", "http://b", "http://c"]
        let start = ContinuousClock.now
        health.recordSilence("http://a", at: start)
        #expect(health.isAvoided("http://a") && !health.isAvoided("http://b"))
        #expect(health.avoided.map(\.endpoint) == ["http://a"])
        #expect(health.dueForRecheck(among: endpoints, now: start + .milliseconds(50)).isEmpty)
        #expect(health.dueForRecheck(among: endpoints, now: start + .milliseconds(150)) == ["http://a"])
        // Offered once per interval, not to every caller at once.
        #expect(health.dueForRecheck(among: endpoints, now: start + .milliseconds(160)).isEmpty)
        #expect(health.choice(among: endpoints, from: 0) == 1)
        #expect(health.next(among: endpoints, after: 2) == 1, "past the avoided one")
        health.recordAnswer("http://a")
        #expect(!health.isAvoided("http://a") && health.avoided.isEmpty)
        #expect(health.choice(among: endpoints, from: 0) == 0)
    }

    @Test func whenEveryMemberIsAvoidedTheOneThatFailedLeastIsTried() {
        let health = EtcdMemberHealth()
        let endpoints = ["http://a", "http://b", "http://c"]
        for _ in 0..<3 { health.recordSilence("http://a") }
        health.recordSilence("http://b")
        health.recordSilence("http://b")
        health.recordSilence("http://c")
        #expect(health.choice(among: endpoints, from: 0) == 2)
        #expect(health.next(among: endpoints, after: 2) == 0, "simply the next one")
    }

    @Test func aHungMemberIsLeftWithinASecondAndAvoidedByTheOtherConnections() throws {
        let cluster = try EtcdCluster(members: 3)
        defer { cluster.stop() }
        let hung = try Self.follower(of: cluster)
        // The hung member first, as every connection's first choice.
        let urls = Array(cluster.clientURLs[hung...] + cluster.clientURLs[..<hung])
        let health = EtcdMemberHealth(recheckAfter: .milliseconds(200))
        // Timeouts scaled as every wait is: a sanitized, loaded run must not leave the hung member
        // (by a slow answer) before it hangs.
        let timeout = Duration.seconds(1) * testSlowdown
        let first = EtcdClient(
            endpoints: urls, timeout: timeout, connectTimeout: .milliseconds(300) * testSlowdown,
            memberHealth: health)
        let second = EtcdClient(
            endpoints: urls, timeout: timeout, connectTimeout: .milliseconds(300) * testSlowdown,
            memberHealth: health)
        _ = try first.txn(compare: [], success: [.put("k", Data("1".utf8))], failure: [])
        _ = try second.range(EtcdRangeRequest(key: "k"))
        try #require(first.currentEndpoint == cluster.clientURLs[hung] && health.avoided.isEmpty)
        let pid = try #require(cluster.pid(of: hung))
        var stopped = true
        defer { if stopped { kill(pid, SIGCONT) } }
        try #require(pauseProcess(pid), "member \(hung) did not stop: \(threadStates(of: pid))")
        let clock = ContinuousClock()

        // The first read waits out its share of the timeout on the hung member, then moves on.
        var started = clock.now
        #expect(try first.range(EtcdRangeRequest(key: "k")).kvs.first?.value == Data("1".utf8))
        // Its share of the timeout (half, for a read), then an answer from another member.
        #expect(clock.now - started < timeout / 2 + .milliseconds(500) * testSlowdown)
        #expect(health.isAvoided(cluster.clientURLs[hung]))
        // The other connection does not wait on it at all.
        started = clock.now
        _ = try second.range(EtcdRangeRequest(key: "k"))
        #expect(second.currentEndpoint != cluster.clientURLs[hung])
        #expect(clock.now - started < .milliseconds(400) * testSlowdown)

        // A watcher that prefers the hung member starts elsewhere, and sees a change.
        let revision = try first.txn(compare: [], success: [.put("k", Data("2".utf8))], failure: []).revision
        let watcher = EtcdWatcher(endpoints: urls, preferred: 0, memberHealth: health)
        var seen: [String] = []
        started = clock.now
        let deadline = clock.now + .seconds(5) * testSlowdown
        try watcher.watch(
            EtcdRangeRequest(key: "k"), startRevision: revision, shouldStop: { clock.now > deadline },
            onEvents: { events, _ in
                seen += events.map { String(decoding: $0.kv.value, as: UTF8.self) }
                return false
            })
        #expect(seen == ["2"])
        #expect(clock.now - started < .milliseconds(400) * testSlowdown)
        #expect(watcher.currentEndpoint != cluster.clientURLs[hung])

        // Still hung: a recheck fails and it stays avoided; running again, it answers one.
        sleep(for: .milliseconds(250))
        first.recheckAvoided(EtcdRangeRequest(key: "k"), timeout: .milliseconds(200))
        #expect(health.isAvoided(cluster.clientURLs[hung]))
        kill(pid, SIGCONT)
        stopped = false
        #expect(
            eventually(within: .seconds(5)) {
                first.recheckAvoided(EtcdRangeRequest(key: "k"), timeout: .milliseconds(200))
                return !health.isAvoided(cluster.clientURLs[hung])
            })
    }

    @Test func aWatchOnAMemberThatDoesNotAnswerGoesToAnother() throws {
        let cluster = try EtcdCluster(members: 3)
        defer { cluster.stop() }
        let hung = try Self.follower(of: cluster)
        let client = EtcdClient(
            endpoints: cluster.clientURLs.indices.filter { $0 != hung }.map { cluster.clientURLs[$0] })
        let pid = try #require(cluster.pid(of: hung))
        var stopped = true
        defer { if stopped { kill(pid, SIGCONT) } }
        try #require(pauseProcess(pid), "member \(hung) did not stop: \(threadStates(of: pid))")
        let health = EtcdMemberHealth()
        let watcher = EtcdWatcher(endpoints: cluster.clientURLs, preferred: hung, memberHealth: health)
        let revision = try client.txn(compare: [], success: [.put("w", Data())], failure: []).revision
        let clock = ContinuousClock()
        let started = clock.now
        var seenAt: ContinuousClock.Instant?
        try watcher.watch(
            EtcdRangeRequest(key: "w"), startRevision: revision,
            shouldStop: { clock.now > started + .seconds(5) * testSlowdown },
            onEvents: { _, _ in
                seenAt = clock.now
                return false
            })
        let seen = try #require(seenAt, "no event")
        // The watch's creation went unanswered for half a second, then another member took it.
        #expect(seen - started < .seconds(1) * testSlowdown)
        #expect(health.isAvoided(cluster.clientURLs[hung]))
        kill(pid, SIGCONT)
        stopped = false
    }

    /// A member that is not the leader.
    private static func follower(of cluster: EtcdCluster) throws -> Int {
        let leader = try #require(cluster.leaderIndex(), "no etcd leader")
        return leader == 0 ? 1 : 0
    }
}
