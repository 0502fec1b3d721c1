import Foundation
import Testing

/// The replicated commit path under a deterministic simulation (``ReplicationSimulation``):
/// hundreds of seeds here, thousands on demand with `COUNTRIES_SIMULATION_SEEDS=5000 swift test
/// --filter ReplicationSimulationTests`. A failure names its seed; `COUNTRIES_SIMULATION_SEED=N`
/// runs that one alone, and its trace shows what happened step by step.
@Suite struct ReplicationSimulationTests {
    private static let steps = 400

    private static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["COUNTRIES_SIMULATION_SEED"].flatMap(UInt64.init) { return [one] }
        let count = environment["COUNTRIES_SIMULATION_SEEDS"].flatMap(Int.init) ?? 200
        return (0..<UInt64(max(1, count))).map { $0 }
    }

    @Test func everySeedKeepsEveryPromise() throws {
        var failed: [UInt64] = []
        var operations = 0
        for seed in Self.seeds {
            let simulation = try ReplicationSimulation(seed: seed)
            try simulation.run(steps: Self.steps)
            operations += simulation.operations.count
            let violations = try simulation.violations()
            if !violations.isEmpty {
                failed.append(seed)
                Issue.record("\(violations.prefix(5).joined(separator: "\n"))")
                if Self.seeds.count == 1 { print(simulation.trace.joined(separator: "\n")) }
            }
            if failed.count >= 3 { break }
        }
        #expect(failed.isEmpty, "failing seeds: \(failed)")
        #expect(operations > Self.seeds.count * 40, "the simulation ran few requests: \(operations)")
    }

    /// The simulation is a function of its seed: one seed, one history, step by step.
    @Test func oneSeedReplaysOneHistory() throws {
        var traces: [[String]] = []
        for _ in 0..<2 {
            let simulation = try ReplicationSimulation(seed: 42)
            try simulation.run(steps: Self.steps)
            traces.append(simulation.trace)
        }
        #expect(traces[0] == traces[1])
        #expect(traces[0].count > Self.steps / 2)
    }

    /// The faults it injects do happen: lost answers, unknown outcomes, restarts, a restore,
    /// id-less writers, so a run that passes has been through them.
    @Test func theRunsGoThroughEveryFault() throws {
        var seen = Set<String>()
        for seed in UInt64(0)..<40 {
            let simulation = try ReplicationSimulation(seed: seed)
            try simulation.run(steps: Self.steps)
            for line in simulation.trace {
                for mark in [
                    "lost", "timed out", "restarted", "restored", "paused", "outcomeUnknown", "quorum",
                ]
                where line.contains(mark) {
                    seen.insert(mark)
                }
            }
            if simulation.operations.contains(where: { $0.id == nil && $0.kind != .get("") }) {
                seen.insert("id-less")
            }
        }
        #expect(
            seen == [
                "lost", "timed out", "restarted", "restored", "paused", "outcomeUnknown", "quorum", "id-less",
            ])
    }

    /// The checks bite: a store that forgets request ids applies retries twice, and the
    /// simulation finds it within a few seeds.
    @Test func aStoreThatForgetsIDsIsCaught() throws {
        var caught = false
        for seed in UInt64(0)..<50 where !caught {
            let simulation = try ReplicationSimulation(seed: seed, breakage: .forgetsIDs)
            try simulation.run(steps: Self.steps)
            caught = try !simulation.violations().isEmpty
        }
        #expect(caught)
    }
}
