import Foundation

/// What one `countries-bench --json` run says of the targets, read back by ``summarize(_:)``.
struct RunTargets: Decodable {
    var machine: [String: String]
    var targets: [Verdict]
}

/// Issue 13's verdicts over several runs (`scripts/bench --runs N`, the `--summarize` mode):
/// per target, the median of the runs' ratios against the same bound, every run's ratio, and
/// the load each run saw. A condition beside a ratio (none dropped) fails the target if it
/// failed in any run.
func summarize(_ runs: [RunTargets]) -> [String] {
    guard let first = runs.first else { return ["no runs to summarize"] }
    var lines: [String] = []
    for (index, target) in first.targets.enumerated() {
        let sameTarget = runs.compactMap { run in
            run.targets.indices.contains(index) && run.targets[index].figure == target.figure
                ? run.targets[index] : nil
        }
        let ratios = sameTarget.compactMap(\.ratio)
        var median = target
        median.ratio = middle(ratios)
        median.failedCondition = sameTarget.compactMap(\.failedCondition).first
        median.rounds = nil  // each run's own rounds are in its table
        let each = ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ")
        var line = median.line
        if median.ratio != nil, let colon = line.range(of: ": ") {
            line.replaceSubrange(colon, with: ": median of \(ratios.count) ")
            line += " (runs: \(each))"
        }
        lines.append(line)
    }
    let loads = runs.map { $0.machine["loadavg"] ?? "?" }.joined(separator: "; ")
    lines.append("load average of each run: \(loads)")
    return lines
}

/// The median: the middle value, or the mean of the two middle ones; nil for none.
func middle(_ values: [Double]) -> Double? {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return nil }
    let half = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2
}

/// `countries-bench --summarize FILE...`: reads the JSON of earlier runs and prints the
/// median verdicts; exits 65 when a file is not such a run.
func summarizeFiles(_ paths: [String]) -> Never {
    var runs: [RunTargets] = []
    for path in paths {
        guard let data = FileManager.default.contents(atPath: path),
            let run = try? JSONDecoder().decode(RunTargets.self, from: data)
        else {
            FileHandle.standardError.write(Data("countries-bench: \(path) is not the JSON of a run\n".utf8))
            exit(65)
        }
        runs.append(run)
    }
    for line in summarize(runs) { print(line) }
    exit(0)
}
