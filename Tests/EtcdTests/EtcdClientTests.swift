import Etcd
import Foundation
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The client against a real etcd (one member unless the test is about several).
@Suite(.enabled(if: EtcdCluster.isAvailable, "etcd is not installed (scripts/bootstrap)"))
struct EtcdClientTests {
    private func put(_ client: EtcdClient, _ key: String, _ value: String) throws -> Int64 {
        try client.txn(compare: [], success: [.put(key, Data(value.utf8))], failure: []).revision
    }

    @Test func putsAndRangesCarryBinaryValuesAndRevisions() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let bytes = Data((0...255).map { UInt8($0) })
        let written = try client.txn(compare: [], success: [.put("bin", bytes)], failure: [])
        #expect(written.succeeded && written.results.count == 1)
        let read = try client.range(EtcdRangeRequest(key: "bin"))
        #expect(read.kvs.count == 1 && read.count == 1 && read.revision == written.revision)
        #expect(read.kvs.first?.value == bytes)
        #expect(read.kvs.first?.createRevision == written.revision && read.kvs.first?.version == 1)
        let missing = try client.range(EtcdRangeRequest(key: "nothing"))
        #expect(missing.kvs.isEmpty && missing.count == 0 && missing.revision == written.revision)
        let members = try client.members()
        #expect(members.count == 1 && members.first?.clientURLs == cluster.clientURLs)
        let status = try client.status(of: cluster.clientURLs[0])
        #expect(status.isLeader && status.raftTerm > 0 && status.version.hasPrefix("3."))
    }

    @Test func aTxnTakesTheBranchItsComparesChoose() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let absent = EtcdCompare.createRevision("k", equals: 0)
        let first = try client.txn(
            compare: [absent], success: [.put("k", Data("1".utf8))],
            failure: [.range(EtcdRangeRequest(key: "k"))])
        #expect(first.succeeded)
        let second = try client.txn(
            compare: [absent], success: [.put("k", Data("2".utf8))],
            failure: [.range(EtcdRangeRequest(key: "k"))])
        #expect(!second.succeeded && second.revision == first.revision)
        guard case .range(let range) = second.results.first else {
            Issue.record("the failure branch's range is missing: \(second.results)")
            return
        }
        #expect(range.kvs.first?.value == Data("1".utf8) && range.kvs.first?.modRevision == first.revision)
        // Each kind of compare, true then false.
        let onValue = try client.txn(compare: [.value("k", equals: Data("1".utf8))], success: [], failure: [])
        let onMod = try client.txn(
            compare: [.modRevision("k", equals: first.revision)], success: [], failure: [])
        let onVersion = try client.txn(compare: [.version("k", equals: 1)], success: [], failure: [])
        let wrong = try client.txn(compare: [.version("k", equals: 2)], success: [], failure: [])
        let less = try client.txn(
            compare: [.modRevisionLess("k", than: first.revision + 1)], success: [], failure: [])
        #expect(
            onValue.succeeded && onMod.succeeded && onVersion.succeeded && !wrong.succeeded && less.succeeded)
        let deleted = try client.txn(
            compare: [], success: [.deleteRange(key: "k", rangeEnd: nil)], failure: [])
        guard case .deleteRange(let count) = deleted.results.first else { return }
        #expect(count == 1 && deleted.revision == first.revision + 1)
    }

    @Test func prefixRangesPageWithLimitAndSort() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        for index in 1...5 { _ = try put(client, "a/\(index)", "v\(index)") }
        _ = try put(client, "a0", "outside")
        _ = try put(client, "b/1", "outside")
        let page = try client.range(.prefix("a/", limit: 2))
        #expect(page.kvs.map(\.key) == ["a/1", "a/2"] && page.count == 5 && page.more)
        let next = try client.range(.from("a/2\u{0}", toPrefixEnd: "a/", limit: 2))
        #expect(next.kvs.map(\.key) == ["a/3", "a/4"] && next.more)
        let descending = try client.range(.prefix("a/", sortTarget: .key, sortOrder: .descending))
        #expect(descending.kvs.map(\.key) == ["a/5", "a/4", "a/3", "a/2", "a/1"] && !descending.more)
        let counted = try client.range(.prefix("a/", countOnly: true))
        #expect(counted.kvs.isEmpty && counted.count == 5)
        let keys = try client.range(.prefix("a/", keysOnly: true, serializable: true))
        #expect(keys.kvs.count == 5 && keys.kvs.allSatisfy(\.value.isEmpty))
        let all = try client.range(.prefix(""))
        #expect(all.count == 7)
        // Paging from the answer: at the first page's revision, so a key put since is not read.
        _ = try put(client, "a/6", "after the first page")
        var pages: [[String]] = []
        var request: EtcdRangeRequest? = .prefix("a/", limit: 2, revision: page.revision)
        while let current = request {
            let answer = try client.range(current)
            pages.append(answer.kvs.map(\.key))
            request = current.next(after: answer)
        }
        #expect(pages == [["a/1", "a/2"], ["a/3", "a/4"], ["a/5"]])
    }

    /// etcd's keys are bytes, and anyone who can write to etcd can put one that is not UTF-8:
    /// it made every read and watch that covered it fail ("key is not UTF-8"). It is read, with
    /// its bytes kept, and paging goes on after those bytes (from its lossy text the next page
    /// started before it, and a page of one key was read for ever). A txn's range too.
    @Test func aKeyThatIsNotUTF8IsReadAndPagedPast() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let client = EtcdClient(endpoints: cluster.clientURLs)
        _ = try put(client, "u/a", "first")
        _ = try put(client, "u/c", "last")
        // Our client takes keys as text; etcdctl, through a shell, puts the byte 0xFF.
        let put = try ChildProcess.run(
            "/bin/sh",
            [
                "-c", #"ETCDCTL_API=3 etcdctl --endpoints "$1" put "$(printf 'u/b\377')" middle"#, "sh",
                cluster.clientURLs[0],
            ],
            environment: ProcessInfo.processInfo.environment)
        try #require(put.exitCode == 0, "\(put)")

        var pages: [[EtcdKeyValue]] = []
        var request: EtcdRangeRequest? = .prefix("u/", limit: 1)
        while let current = request, pages.count < 10 {
            let answer = try client.range(current)
            pages.append(answer.kvs)
            request = current.next(after: answer)
        }
        #expect(pages.map { $0.map(\.key) } == [["u/a"], ["u/b\u{FFFD}"], ["u/c"]])
        #expect(pages.map { $0.map(\.keyBytes) } == [[nil], [Array("u/b".utf8) + [0xFF]], [nil]])
        #expect(pages[1].first?.value == Data("middle".utf8))
        let inTxn = try client.txn(compare: [], success: [.range(.prefix("u/"))], failure: [])
        guard case .range(let range)? = inTxn.results.first else {
            Issue.record("no range in \(inTxn)")
            return
        }
        #expect(range.kvs.map(\.key) == ["u/a", "u/b\u{FFFD}", "u/c"])
    }

    @Test func definiteRefusalsAreRejectedOrCompacted() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let tooMany = (0..<200).map { EtcdOperation.put("k\($0)", Data()) }
        #expect(throws: EtcdError.self) { try client.txn(compare: [], success: tooMany, failure: []) }
        do {
            _ = try client.txn(compare: [], success: tooMany, failure: [])
        } catch {
            #expect(error.code == .rejected, "\(error)")
        }
        var revision: Int64 = 0
        for index in 0..<3 { revision = try put(client, "k", "\(index)") }
        do {
            _ = try client.range(EtcdRangeRequest(key: "k", revision: revision + 100))
            Issue.record("a future revision was read")
        } catch {
            #expect(error.code == .rejected, "\(error)")
        }
        try cluster.compact(to: revision)
        do {
            _ = try client.range(EtcdRangeRequest(key: "k", revision: revision - 1))
            Issue.record("a compacted revision was read")
        } catch {
            #expect(error.code == .compacted, "\(error)")
        }
    }

    @Test func theNextEndpointAnswersWhenTheFirstIsDead() throws {
        let cluster = try EtcdCluster(members: 1)
        let dead = "http://127.0.0.1:\(try freeTCPPort())"
        let client = EtcdClient(endpoints: [dead, cluster.clientURLs[0]])
        #expect(client.currentEndpoint == dead)
        // A txn too: nothing was sent to the dead one, so it may go on.
        let written = try client.txn(compare: [], success: [.put("k", Data("v".utf8))], failure: [])
        #expect(written.succeeded && client.currentEndpoint == cluster.clientURLs[0])
        let other = EtcdClient(endpoints: [dead, cluster.clientURLs[0]])
        #expect(try other.range(EtcdRangeRequest(key: "k")).kvs.count == 1)
        #expect(other.currentEndpoint == cluster.clientURLs[0])
    }

    @Test func nothingListeningIsUnreachableAndASilentListenerOutcomeUnknown() throws {
        let clock = ContinuousClock()
        let dead = EtcdClient(
            endpoints: ["http://127.0.0.1:\(try freeTCPPort())"], timeout: .milliseconds(500))
        var started = clock.now
        do {
            _ = try dead.txn(compare: [], success: [.put("k", Data())], failure: [])
            Issue.record("a txn reached nobody")
        } catch {
            #expect(error.code == .unreachable, "\(error)")
        }
        do {
            _ = try dead.range(EtcdRangeRequest(key: "k"))
            Issue.record("a range reached nobody")
        } catch {
            #expect(error.code == .unreachable, "\(error)")
        }
        #expect(clock.now - started < .seconds(2) * testSlowdown)

        // Accepts (the kernel's backlog does) and never answers.
        let listener = try SilentListener()
        let silent = EtcdClient(endpoints: [listener.url], timeout: .milliseconds(400))
        started = clock.now
        do {
            _ = try silent.txn(compare: [], success: [.put("k", Data())], failure: [])
            Issue.record("a silent listener answered")
        } catch {
            #expect(error.code == .outcomeUnknown, "\(error)")
        }
        let elapsed = clock.now - started
        #expect(elapsed >= .milliseconds(350) && elapsed < .milliseconds(1500) * testSlowdown, "\(elapsed)")
    }
}

/// A TCP socket that listens on a free loopback port and never accepts nor answers: a peer that
/// takes the request and hangs.
final class SilentListener {
    let fd: Int32
    let url: String

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        guard IPv4SocketAddress(host: "127.0.0.1", port: 0).bind(fd), listen(fd, 8) == 0,
            let bound = IPv4SocketAddress(boundTo: fd)
        else { throw HarnessFailure("cannot listen") }
        url = "http://127.0.0.1:\(bound.port)"
    }

    deinit { close(fd) }
}
