import LoadGeneration

/// One of issue 13's four load targets: the figure, its baseline and its bound. The paired
/// rounds and the verdicts are both built from ``LoadTarget/all``, so a target's name is written
/// once.
struct LoadTarget {
    /// The service under load.
    enum Service {
        case durable
        case inMemory
        /// The key of ``toggles`` in the sweeps.
        var sweepName: String { self == .durable ? "durable" : "in-memory" }
    }

    /// What the service is compared with.
    enum Baseline: String {
        /// A bare REP server that appends a page and fdatasyncs it before each reply.
        case syncingFloor = "floor REQ/REP+fdatasync"
        /// A bare ROUTER server that shares one fdatasync among every request queued, and
        /// publishes each: what group commit can reach with libzmq alone.
        case groupSyncingFloor = "floor ROUTER+group fdatasync+PUB"
        case publishingFloor = "floor REQ/REP+PUB"
        case floor = "floor REQ/REP"
    }

    /// The target's figure, as its ``Verdict`` names it.
    var figure: String
    var service: Service
    var baseline: Baseline
    var clients: Int
    /// Throughput (toggles/s, at least `limit` times the baseline's) or p50 latency (at most).
    var throughput: Bool
    var limit: Double

    // The durable targets were "≥ 1.0× / ≤ 1.0× Redis appendfsync always" (issue 13) until
    // issue 23: a bare libzmq server that syncs each request is itself 1.28-1.38× Redis here, so
    // the durable service is judged against the bare servers that sync as it does.
    static let all = [
        LoadTarget(
            figure: "durable 16-client toggles/s", service: .durable, baseline: .groupSyncingFloor,
            clients: 16, throughput: true, limit: 0.9),
        LoadTarget(
            figure: "durable 1-client p50", service: .durable, baseline: .syncingFloor,
            clients: 1, throughput: false, limit: 1.1),
        LoadTarget(
            figure: "in-memory 16-client toggles/s", service: .inMemory, baseline: .publishingFloor,
            clients: 16, throughput: true, limit: 0.9),
        LoadTarget(
            figure: "in-memory 1-client p50", service: .inMemory, baseline: .floor, clients: 1,
            throughput: false, limit: 1.1),
    ]

    /// The figure this target compares, of one load run.
    func figure(of result: LoadResult) -> Double {
        throughput ? result.perSecond : result.latency.p50
    }
}

/// One paired round of one target: both figures (toggles/s or µs).
struct PairedRound {
    var target: LoadTarget
    var round: Int
    var service: Double
    var baseline: Double

    /// The service's figure over the baseline's; nil when the baseline measured nothing.
    var ratio: Double? { baseline > 0 && service.isFinite ? service / baseline : nil }
}

/// Runs every target's baseline and service back to back, `rounds` times, the baseline first in
/// odd rounds and second in even ones; returns every round of every target (a round with failed
/// requests is left out). `service` and `baseline` each run one load of a client count against
/// what they are given.
///
/// The sweeps run each contender once, tens of seconds apart, while a shared machine's load
/// moves; here the two runs of a ratio are seconds apart, and the verdict takes the median of
/// the rounds' ratios.
func runPairedRounds(
    _ targets: [LoadTarget], rounds: Int, progress: (String) -> Void,
    service: (LoadTarget.Service, Int) -> LoadResult, baseline: (LoadTarget.Baseline, Int) -> LoadResult
) -> [PairedRound] {
    var results: [PairedRound] = []
    for round in 1...max(1, rounds) {
        for target in targets {
            progress("targets: \(target.figure), paired round \(round) of \(rounds)")
            // The baseline goes first in odd rounds, second in even ones.
            let baselineResult: LoadResult
            let serviceResult: LoadResult
            if round % 2 == 1 {
                baselineResult = baseline(target.baseline, target.clients)
                serviceResult = service(target.service, target.clients)
            } else {
                serviceResult = service(target.service, target.clients)
                baselineResult = baseline(target.baseline, target.clients)
            }
            guard serviceResult.failures.isEmpty, baselineResult.failures.isEmpty else {
                progress("targets: \(target.figure), round \(round): requests failed; the round is left out")
                continue
            }
            results.append(
                PairedRound(
                    target: target, round: round, service: target.figure(of: serviceResult),
                    baseline: target.figure(of: baselineResult)))
        }
    }
    return results
}
