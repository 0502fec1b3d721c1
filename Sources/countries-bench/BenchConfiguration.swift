import Foundation
import LoadGeneration

/// What one measuring run of the bench does, from its options: passed down to every scenario
/// instead of globals.
struct BenchConfiguration: Sendable {
    /// Small counts: CI proves the bench works; nothing about speed is asserted.
    var quick: Bool
    /// Print the results as JSON on stdout.
    var json: Bool
    /// Where to write the latency chart, if anywhere.
    var svgPath: String?
    /// The scenarios to run; nil runs every one.
    var only: Set<String>?

    /// This executable's path: the floor server is this binary again, and `countries` sits
    /// beside it.
    let benchPath =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]

    /// The `countries` binary next to this one.
    var binary: String {
        URL(fileURLWithPath: benchPath).deletingLastPathComponent().appendingPathComponent("countries").path
    }

    /// Whether `scenario` runs.
    func wanted(_ scenario: String) -> Bool { only?.contains(scenario) ?? true }

    // Counts: each load run stops at `loadRequests` per client or `loadSeconds`, whichever comes
    // first.
    var loadSeconds: Double { quick ? 0.3 : 2.0 }
    var loadRequests: Int { quick ? 300 : 200_000 }
    var clientCounts: [Int] { [1, 4, 16] }
    var fanOutSeconds: Double { quick ? 0.2 : 2.0 }
    var fanOutCounts: [Int] { [1, 10, 100] }
    var fanOutRates: [Int] { [500, 1000] }
    var lateJoins: Int { quick ? 2 : 10 }
    var cliRuns: Int { quick ? 3 : 30 }
    /// Rounds of the four load targets, each baseline and the service back to back.
    var pairedRoundCount: Int { quick ? 1 : 3 }
    /// Clients of the replicated rows.
    var replicatedClientCounts: [Int] { [1, 16] }

    /// A load run of `clients` clients at this run's counts.
    func plan(_ clients: Int) -> LoadPlan {
        LoadPlan(clients: clients, requests: loadRequests, seconds: loadSeconds, warmup: quick ? 20 : 200)
    }
}
