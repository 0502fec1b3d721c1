/// One of issue 13's load targets, measured in paired rounds: its baseline and the service,
/// back to back.
struct PairedTarget {
    /// The target's figure, as its ``Verdict`` names it.
    var figure: String
    /// The baseline's name: `Redis always`.
    var baselineName: String
    /// Throughput (toggles/s, higher is better) or p50 latency (lower is better).
    var throughput: Bool
    /// One load run against the baseline.
    var baseline: () -> LoadResult
    /// One load run against the service.
    var service: () -> LoadResult

    /// The figure this target compares, of one load run.
    func figure(of result: LoadResult) -> Double {
        throughput ? result.perSecond : result.latency.p50
    }
}

/// One paired round of one target: both figures (toggles/s or µs).
struct PairedRound {
    var figure: String
    var baselineName: String
    var throughput: Bool
    var round: Int
    var service: Double
    var baseline: Double

    /// The service's figure over the baseline's; nil when the baseline measured nothing.
    var ratio: Double? { baseline > 0 && service.isFinite ? service / baseline : nil }
}

/// Runs every target's baseline and service back to back, `rounds` times, the baseline first in
/// odd rounds and second in even ones; returns every round of every target (a round with failed
/// requests is left out).
///
/// The sweeps run each contender once, tens of seconds apart, while a shared machine's load
/// moves; here the two runs of a ratio are seconds apart, and the verdict takes the median of
/// the rounds' ratios.
func runPairedRounds(
    _ targets: [PairedTarget], rounds: Int, progress: (String) -> Void
) -> [PairedRound] {
    var results: [PairedRound] = []
    for round in 1...max(1, rounds) {
        for target in targets {
            progress("targets: \(target.figure), paired round \(round) of \(rounds)")
            let baselineFirst = round % 2 == 1
            let first = baselineFirst ? target.baseline() : target.service()
            let second = baselineFirst ? target.service() : target.baseline()
            let (service, baseline) = baselineFirst ? (second, first) : (first, second)
            guard service.failures.isEmpty, baseline.failures.isEmpty else {
                progress("targets: \(target.figure), round \(round): requests failed; the round is left out")
                continue
            }
            results.append(
                PairedRound(
                    figure: target.figure, baselineName: target.baselineName, throughput: target.throughput,
                    round: round, service: target.figure(of: service),
                    baseline: target.figure(of: baseline)))
        }
    }
    return results
}
