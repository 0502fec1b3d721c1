import Etcd
import Foundation
import LoadGeneration
import SystemSupport
import ZeroMQ

/// The etcd-transaction floor of the replicated targets (issue 23, "Speed"): what a user gets by
/// writing to etcd directly. Each client is a plain libcurl connection to the same JSON gateway
/// the replicas use (the project's `Etcd` module), doing one compare-and-put transaction at a
/// time on a key of its own: compare the value it last wrote, put the next.
struct EtcdTransactionClient: RoundTripper {
    private let client: EtcdClient
    private let key: String
    private var written: UInt64 = 0

    /// A client on `endpoints` (the first one first, as a replica given the same list) writing
    /// `/bench-floor/<index>`; writes its first value unconditionally.
    init(endpoints: [String], index: Int) throws {
        client = EtcdClient(endpoints: endpoints, timeout: .seconds(5))
        key = "/bench-floor/\(index)"
        _ = try client.txn(compare: [], success: [.put(key, Data("0".utf8))], failure: [])
    }

    mutating func roundTrip() throws {
        let next = written + 1
        let result = try client.txn(
            compare: [.value(key, equals: Data(String(written).utf8))],
            success: [.put(key, Data(String(next).utf8))],
            failure: [.range(EtcdRangeRequest(key: key))])
        guard result.succeeded else { throw BenchError("the floor's compare on \(key) failed") }
        written = next
    }
}

/// The three replicated figures and their floors, from one cluster in one run.
struct ReplicatedRun {
    /// 1 client on the first replica.
    var oneClient: LoadResult?
    /// 16 clients on the first replica.
    var sixteenOnOne: LoadResult?
    /// 16 clients spread over both replicas (client i on replica i mod 2).
    var sixteenSpread: LoadResult?
    /// Refusals among the spread run's replies, by error code.
    var refusedSpread: [String: Int] = [:]
    /// The etcd-transaction floor with 1 and 16 clients.
    var floor: [Int: LoadResult] = [:]

    /// The verdicts of the three targets.
    var verdicts: [Verdict] {
        let refused = refusedSpread.values.reduce(0, +)
        let share = sixteenSpread.map { Double(refused) / Double(max(1, $0.completed)) * 100 } ?? 0
        return [
            Verdict(
                "replicated 1-client toggle p50", oneClient?.latency.p50, atMost: true, 1.2,
                "etcd transaction",
                floor[1]?.latency.p50),
            Verdict(
                "replicated 16 clients on one replica toggles/s", sixteenOnOne?.perSecond, atMost: false, 2.0,
                "etcd transaction", floor[16]?.perSecond),
            Verdict(
                "replicated 16 clients over two replicas toggles/s", sixteenSpread?.perSecond, atMost: false,
                2.0,
                "etcd transaction", floor[16]?.perSecond,
                failedCondition: refused == 0
                    ? nil
                    : String(format: "%d refused (%.1f%%: %@)", refused, share, "\(refusedSpread)")),
        ]
    }
}

extension ReplicatedRun {
    /// The rows: each figure beside its etcd-transaction floor, with its target.
    func addRows(to report: inout Report) {
        let floorName = "etcd transaction"
        if let result = oneClient {
            report.add(
                "toggle replicated, 1 client on the writer", "p50", result.latency.p50, "µs",
                baseline: floor[1].map { (floorName, $0.latency.p50) }, ratioLimit: 1.2,
                target: "≤ 1.2× etcd transaction")
        }
        if let result = sixteenOnOne {
            report.add(
                "toggle replicated, 16 clients on the writer", "toggles/s", result.perSecond, "/s",
                baseline: floor[16].map { (floorName, $0.perSecond) }, ratioLimit: 2.0, lowerIsBetter: false,
                target: "≥ 2× etcd transaction")
        }
        if let result = sixteenSpread {
            let refused = refusedSpread.values.reduce(0, +)
            report.add(
                "toggle replicated, 16 clients over two replicas", "toggles/s", result.perSecond, "/s",
                baseline: floor[16].map { (floorName, $0.perSecond) }, ratioLimit: 2.0, lowerIsBetter: false,
                target: "≥ 2× etcd transaction, none refused", extraCondition: refused == 0,
                note: "\(refused) of \(result.completed) refused")
        }
        for (clients, result) in floor.sorted(by: { $0.key < $1.key }) {
            let name =
                "etcd transaction floor (libcurl, JSON gateway), \(clients) client\(clients == 1 ? "" : "s")"
            report.add(name, "p50", result.latency.p50, "µs")
            report.add(name, "transactions/s", result.perSecond, "/s")
        }
    }
}

/// Runs the replicated targets on a cluster already up: 1 and 16 clients on the first of
/// `endpoints`, 16 spread over all of them (refusals counted), and the etcd-transaction floor
/// with 1 and 16 clients on the same gateway.
func runReplicatedTargets(
    plan: (Int) -> LoadPlan, etcd: [String], endpoints: [String], context: Context,
    check: (LoadResult, String) -> Void
) -> ReplicatedRun {
    var run = ReplicatedRun()
    for clients in [1, 16] {
        progress("replicated targets: \(clients) client(s) on the writer")
        let result = runLoad(plan(clients)) { index in
            try RequestClient(context: context, endpoint: endpoints[0], index: index, body: serviceToggleBody)
        }
        check(result, "replicated on the writer")
        if clients == 1 { run.oneClient = result } else { run.sixteenOnOne = result }
    }
    progress("replicated targets: 16 clients over \(endpoints.count) replicas, refusals counted")
    let refused = Locked<[String: Int]>([:])
    let spread = runLoad(plan(16)) { index in
        try CheckedRequestClient(
            context: context, endpoint: endpoints[index % endpoints.count], index: index, refused: refused)
    }
    check(spread, "replicated spread")
    run.sixteenSpread = spread
    run.refusedSpread = refused.current
    for clients in [1, 16] {
        progress("etcd-transaction floor: \(clients) libcurl client(s), one compare-and-put at a time")
        let result = runLoad(plan(clients)) { index in
            try EtcdTransactionClient(endpoints: etcd, index: index)
        }
        check(result, "etcd-transaction floor")
        run.floor[clients] = result
    }
    return run
}

/// The index among `commands` of the replica etcd names as the writer (the lowest create
/// revision under `/countries/writer/`), waiting up to 5 s for one.
func waitForWriter(etcd: [String], among commands: [String]) -> Int? {
    let client = EtcdClient(endpoints: etcd, timeout: .seconds(1))
    let deadline = nowNanos() + 5_000_000_000
    while nowNanos() < deadline {
        let request = EtcdRangeRequest.prefix(
            "/countries/writer/", limit: 1, sortTarget: .createRevision, sortOrder: .ascending)
        if let value = try? client.range(request).kvs.first?.value,
            let index = commands.firstIndex(of: String(decoding: value, as: UTF8.self))
        {
            return index
        }
        usleep(100_000)
    }
    return nil
}
