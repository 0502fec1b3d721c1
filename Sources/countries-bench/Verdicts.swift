import Foundation

/// One target of issue 13 (docs/BENCHMARKS.md, "Targets"), judged from this run's ratios:
/// `target durable 16-client toggles/s >= 1.0x Redis always: 0.93x FAIL`.
struct Verdict: Codable, Sendable {
    /// What is measured, against what: `durable 16-client toggles/s`.
    var figure: String
    /// The baseline's name: `Redis always`.
    var baseline: String
    /// The bound on the ratio.
    var limit: Double
    /// Whether the ratio must stay at or under the bound (latency) or reach it (throughput).
    var atMost: Bool
    /// This run's ratio, nil when a side is missing (Redis not installed, a scenario not run).
    var ratio: Double?
    /// A condition beside the ratio (none dropped), with its words when it fails.
    var failedCondition: String?
    /// The ratio of each paired round, when `ratio` is their median (``runPairedRounds``).
    var rounds: [Double]?

    /// Whether the target held in this run.
    var met: Bool? {
        guard let ratio else { return nil }
        return (atMost ? ratio <= limit : ratio >= limit) && failedCondition == nil
    }

    /// The line `scripts/bench` prints.
    var line: String {
        let bound = "\(atMost ? "<=" : ">=") \(String(format: "%.1f", limit))x \(baseline)"
        guard let ratio, let met else { return "target \(figure) \(bound): n/a (not measured in this run)" }
        let extra = failedCondition.map { ", \($0)" } ?? ""
        let paired =
            rounds.map {
                " (median of paired rounds: \($0.map { String(format: "%.2f", $0) }.joined(separator: ", ")))"
            }
            ?? ""
        return
            "target \(figure) \(bound): \(String(format: "%.2f", ratio))x\(extra) \(met ? "PASS" : "FAIL")\(paired)"
    }

    /// A verdict from two figures of the same run (either missing or zero: not measured).
    init(
        _ figure: String, _ value: Double?, atMost: Bool, _ limit: Double, _ baseline: String,
        _ baselineValue: Double?, failedCondition: String? = nil
    ) {
        self.figure = figure
        self.baseline = baseline
        self.limit = limit
        self.atMost = atMost
        self.failedCondition = failedCondition
        if let value, let baselineValue, baselineValue > 0, value.isFinite {
            ratio = value / baselineValue
        }
    }

    /// A verdict on the median of paired rounds' ratios, or else on two figures of the sweeps.
    init(
        _ figure: String, rounds: [Double]?, orElse value: Double?, atMost: Bool, _ limit: Double,
        _ baseline: String, _ baselineValue: Double?
    ) {
        self.init(figure, value, atMost: atMost, limit, baseline, baselineValue)
        if let rounds, let median = middle(rounds) {
            ratio = median
            self.rounds = rounds
        }
    }
}
