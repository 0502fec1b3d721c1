import Foundation
@preconcurrency import Glibc
import LoadGeneration
import ZeroMQ

/// What a run prints: the machine it ran on, the chart, the table (or JSON) and the verdicts.
extension Bench {
    /// The machine's description: CPU, cores, memory, kernel, libzmq, mode, time taken, load.
    func machine() -> [String: String] {
        let elapsed = Double(nowNanos() - started) / 1e9
        return [
            "cpu": Self.readFirstLine("/proc/cpuinfo", prefix: "model name") ?? "unknown",
            "cores": String(ProcessInfo.processInfo.activeProcessorCount),
            "memory": Self.readFirstLine("/proc/meminfo", prefix: "MemTotal") ?? "unknown",
            "kernel": Self.kernel(),
            "libzmq": ZMQVersion.string,
            "mode": configuration.quick ? "quick" : "full",
            "elapsed": String(format: "%.0f s", elapsed),
            "loadavg": "\(loadAtStart) at start, \(Self.loadAverage()) at end",
        ]
    }

    /// The targets of issue 13, each judged from this run's ratios (docs/BENCHMARKS.md,
    /// "Targets"). The load targets are judged on the median of their paired rounds when those ran.
    func verdicts() -> [Verdict] {
        LoadTarget.all.map { target in
            Verdict(
                target.figure, rounds: pairedRatios?[target.figure],
                orElse: toggles[target.service.sweepName]?[target.clients].map(target.figure(of:)),
                atMost: !target.throughput, target.limit, target.baseline.rawValue, sweepBaseline(target))
        } + [
            Verdict(
                "100-subscriber fan-out p50 at 500/s", fanOutTarget?.service.latency.p50, atMost: true, 1.3,
                "fan-out floor", fanOutTarget?.floor.latency.p50,
                failedCondition: fanOutTarget.map { $0.service.everyoneGotEverything ? nil : "some dropped" }
                    ?? nil)
        ] + (replicatedRun?.verdicts ?? [])
    }

    /// A load target's baseline figure in the sweeps.
    private func sweepBaseline(_ target: LoadTarget) -> Double? {
        let result =
            switch target.baseline {
            case .syncingFloor: target.clients == 1 ? syncingFloor : nil
            case .groupSyncingFloor: target.clients == 16 ? groupSyncingFloor : nil
            case .publishingFloor: target.clients == 16 ? publishingFloor : nil
            case .floor: floorResults[target.clients]
            }
        return result.map(target.figure(of:))
    }

    /// Writes the chart when asked, then prints the results as a table or as JSON.
    func printResults() throws {
        let machine = self.machine()
        if let svgPath = configuration.svgPath {
            let subtitle =
                "\(machine["cores"] ?? "?") cores, \(machine["cpu"] ?? ""), libzmq \(ZMQVersion.string); tcp loopback; log scale"
            let svg = chartSVG(
                bars, title: "countries: latency against the floor and Redis (p50 / p99)", subtitle: subtitle)
            do {
                try svg.write(toFile: svgPath, atomically: true, encoding: .utf8)
                progress("wrote \(svgPath)")
            } catch {
                progress("cannot write \(svgPath): \(error)")
            }
        }
        let verdicts = self.verdicts()
        if configuration.json {
            /// The document `--json` prints (and `--summarize` reads back).
            struct Output: Encodable {
                var machine: [String: String]
                var rows: [ResultRow]
                var notes: [String]
                var verdicts: [String]
                var targets: [Verdict]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            let data = try encoder.encode(
                Output(
                    machine: machine, rows: report.rows, notes: report.notes, verdicts: verdicts.map(\.line),
                    targets: verdicts))
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(report.table())
            print("")
            for note in report.notes { print("- \(note)") }
            print(
                "- machine: \(machine["cores"]!) cores, \(machine["cpu"]!), \(machine["memory"]!) RAM, Linux \(machine["kernel"]!), libzmq \(ZMQVersion.string); load average \(machine["loadavg"]!); \(machine["mode"]!) run took \(machine["elapsed"]!)"
            )
            print("")
            // A loaded machine swings these ratios two-fold: the load is on every line.
            for verdict in verdicts { print("\(verdict.line) (load \(machine["loadavg"]!))") }
        }
    }

    /// The value of the first line of a /proc file that starts with `prefix`.
    private static func readFirstLine(_ path: String, prefix: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map {
            $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        }
    }

    /// The kernel's release (`uname -r`).
    private static func kernel() -> String {
        var uts = utsname()
        uname(&uts)
        return withUnsafeBytes(of: &uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
