import LoadGeneration

/// A target judged on paired rounds: one figure of the service against the same figure of its
/// baseline, measured back to back (``runPairedRounds(_:rounds:progress:service:baseline:)``).
protocol PairedTarget {
    /// What is measured, as its ``Verdict`` names it: `durable 1-client p50`.
    var figure: String { get }
    /// The baseline's name, as the rows and the verdict print it.
    var baselineName: String { get }
    /// Throughput (toggles/s, at least the limit times the baseline's) or p50 latency (at most).
    var throughput: Bool { get }
}

extension PairedTarget {
    /// The figure this target compares, of one load run.
    func figure(of result: LoadResult) -> Double {
        throughput ? result.perSecond : result.latency.p50
    }
}

/// One paired round of one target: both figures (toggles/s or µs).
struct PairedRound<Target: PairedTarget> {
    var target: Target
    var round: Int
    var service: Double
    var baseline: Double

    /// The service's figure over the baseline's; nil when the baseline measured nothing.
    var ratio: Double? { baseline > 0 && service.isFinite ? service / baseline : nil }
}

/// Runs every target's baseline and service back to back, `rounds` times, the baseline first in
/// odd rounds and second in even ones; returns every round of every target (a round with failed
/// requests is left out). `service` and `baseline` each run one load for a target.
///
/// The sweeps run each contender once, tens of seconds apart, while a shared machine's load
/// moves; here the two runs of a ratio are seconds apart, and the verdict takes the median of
/// the rounds' ratios.
func runPairedRounds<Target: PairedTarget>(
    _ targets: [Target], rounds: Int, progress: (String) -> Void,
    service: (Target) -> LoadResult, baseline: (Target) -> LoadResult
) -> [PairedRound<Target>] {
    var results: [PairedRound<Target>] = []
    for round in 1...max(1, rounds) {
        for target in targets {
            progress("targets: \(target.figure), paired round \(round) of \(rounds)")
            // The baseline goes first in odd rounds, second in even ones.
            let baselineResult: LoadResult
            let serviceResult: LoadResult
            if round % 2 == 1 {
                baselineResult = baseline(target)
                serviceResult = service(target)
            } else {
                serviceResult = service(target)
                baselineResult = baseline(target)
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

/// The ratios of each target's rounds, by the target's figure.
func ratiosByFigure<Target>(_ rounds: [PairedRound<Target>]) -> [String: [Double]] {
    Dictionary(grouping: rounds, by: \.target.figure).mapValues { $0.compactMap(\.ratio) }
}
