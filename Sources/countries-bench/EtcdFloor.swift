import Etcd
import Foundation
import LoadGeneration
import SystemSupport
import ZeroMQ

/// The etcd-transaction floor of the replicated targets (issue 23, "Speed"): what a user gets by
/// writing to etcd directly. Each client is the project's `Etcd` client, as the replicas use it:
/// its transactions over etcd's gRPC API (they went through the JSON gateway until stop 44,
/// docs/BENCHMARKS.md), one compare-and-put transaction at a time on a key of its own: compare
/// the value it last wrote, put the next.
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

/// The replicated targets' paired rounds, from one cluster in one run.
struct ReplicatedRun {
    /// Each target's rounds: the service and the etcd-transaction floor back to back.
    var rounds: [PairedRound<ReplicatedTarget>] = []
    /// Refusals among the spread rounds' replies, by error code.
    var refusedSpread: [String: Int] = [:]
    /// The changes the spread rounds completed, refused ones included.
    var spreadCompleted = 0

    private var refused: Int { refusedSpread.values.reduce(0, +) }

    /// The verdicts of the replicated targets, each on the median of its rounds' ratios.
    var verdicts: [Verdict] {
        let ratios = ratiosByFigure(rounds)
        let share = Double(refused) / Double(max(1, spreadCompleted)) * 100
        return ReplicatedTarget.all.map { target in
            var verdict = Verdict(
                target.figure, rounds: ratios[target.figure], orElse: nil, atMost: !target.throughput,
                target.limit, target.baselineName, nil)
            if target.placement.isSpread, refused > 0 {
                verdict.failedCondition = String(
                    format: "%d refused (%.1f%%: %@)", refused, share, "\(refusedSpread)")
            }
            return verdict
        }
    }
}

extension ReplicatedRun {
    /// The rows: each round's figure beside the floor measured next to it, with its target.
    func addRows(to report: inout Report) {
        for round in rounds {
            let target = round.target
            report.add(
                "\(target.scenario), paired round \(round.round)", target.throughput ? "toggles/s" : "p50",
                round.service, target.throughput ? "/s" : "µs",
                baseline: (target.baselineName, round.baseline),
                ratioLimit: target.limit, lowerIsBetter: !target.throughput, target: target.bound,
                extraCondition: !target.placement.isSpread || refused == 0)
        }
        report.notes.append(
            "replicated: \(refused) of \(spreadCompleted) changes refused in the rounds over two replicas; "
                + "each round's baseline is as many etcd-transaction clients (the Etcd module over etcd's gRPC "
                + "API, as the replicas use it; one compare-and-put at a time) on the same cluster, measured beside it"
        )
    }
}

/// Runs the replicated targets on a cluster already up, in paired rounds
/// (``runPairedRounds(_:rounds:progress:service:baseline:)``): 1 and 16 clients on the first of
/// `endpoints`, 16 spread over all of them as plain REQ clients and as the project's clients
/// (refusals counted), each beside the etcd-transaction floor with as many clients on the same
/// cluster.
func runReplicatedTargets(
    plan: (Int) -> LoadPlan, rounds: Int, etcd: [String], endpoints: [String], context: Context,
    check: (LoadResult, String) -> Void
) -> ReplicatedRun {
    var run = ReplicatedRun()
    let refused = Locked<[String: Int]>([:])
    run.rounds = runPairedRounds(
        ReplicatedTarget.all, rounds: rounds, progress: progress,
        service: { target in
            let result: LoadResult
            switch target.placement {
            case .writer:
                result = runLoad(plan(target.clients)) { index in
                    try RequestClient(
                        context: context, endpoint: endpoints[0], index: index, body: serviceToggleBody)
                }
            case .spread:
                result = runLoad(plan(target.clients)) { index in
                    try CheckedRequestClient(
                        context: context, endpoint: endpoints[index % endpoints.count], index: index,
                        refused: refused)
                }
            case .spreadToWriter:
                result = runLoad(plan(target.clients)) { index in
                    ReplicaToggler(context: context, endpoints: endpoints, index: index, refused: refused)
                }
            }
            if target.placement.isSpread { run.spreadCompleted += result.completed }
            check(result, target.scenario)
            return result
        },
        baseline: { target in
            let result = runLoad(plan(target.clients)) { index in
                try EtcdTransactionClient(endpoints: etcd, index: index)
            }
            check(result, "etcd-transaction floor, \(target.clients) client(s)")
            return result
        })
    run.refusedSpread = refused.current
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
