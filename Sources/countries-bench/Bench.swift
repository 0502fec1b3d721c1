import Foundation
import LoadGeneration
import ZeroMQ

/// One measuring run of the bench: its configuration, the figures measured so far and the
/// report they make, where main.swift once kept them in globals. The scenarios fill it in
/// (LoadSweeps.swift and LoadRows.swift for the load targets, OtherScenarios.swift for the rest);
/// BenchOutput.swift prints it.
final class Bench {
    let configuration: BenchConfiguration
    let context: Context
    /// The `countries` binary under test.
    let binary: String
    /// The machine's load average when the run started.
    let loadAtStart: String
    let started = nowNanos()
    var report = Report()
    var bars: [ChartBar] = []
    /// Server CPU per request, by what was measured and its client count.
    var serverCPU: [String: [Int: Double]] = [:]

    // The load sweeps.
    var floorResults: [Int: LoadResult] = [:]
    var publishingFloor: LoadResult?
    /// The durable 1-client target's bound: a bare server that syncs one page before each reply.
    var syncingFloor: LoadResult?
    /// Beside the durable 16-client target: a bare ROUTER server with group fdatasync and PUB.
    var groupSyncingFloor: LoadResult?
    let groupSyncName = "floor ROUTER+group fdatasync+PUB"
    var redis: [String: [Int: LoadResult]] = [:]
    var toggles: [String: [Int: LoadResult]] = [:]
    var pairedRatios: [String: [Double]]?
    var pairedRounds: [PairedRound<LoadTarget>] = []
    var replicated: [Int: LoadResult] = [:]
    /// The replicated targets' runs and their etcd-transaction floor (``ReplicatedRun``).
    var replicatedRun: ReplicatedRun?

    // Fan-out and memory.
    var idleKiB: Int?
    /// 100 subscribers at 500/s: the service's run and the floor's.
    var fanOutTarget: (service: FanOutResult, floor: FanOutResult)?
    var attachedKiB: Int?

    /// A run with `configuration`; throws when `countries` is not beside the bench.
    init(_ configuration: BenchConfiguration) throws {
        self.configuration = configuration
        binary = configuration.binary
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchError("cannot find the countries binary at \(binary); build it with the bench")
        }
        loadAtStart = Self.loadAverage()
        context = try Context()
    }

    /// Every scenario wanted, in order, then the rows of the load sweeps.
    func measure() {
        measureFloors()
        measureSyncingFloors()
        measureRedis()
        measureToggles()
        measurePairedTargets()
        measureReplicated()
        addLoadRows()
        measureFanOut()
        measureLateJoiner()
        measureRender()
        measureWeb()
        measureCLI()
        context.terminate()
        Cleanup.shared.runAll()
    }

    /// The first three figures of /proc/loadavg.
    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
    }

    // MARK: Helpers of the scenarios

    func wanted(_ scenario: String) -> Bool { configuration.wanted(scenario) }

    func plan(_ clients: Int) -> LoadPlan { configuration.plan(clients) }

    /// A floor server of this bench binary.
    func floorServer(_ mode: FloorServer.Mode) throws -> FloorServer {
        try FloorServer(mode, bench: configuration.benchPath, context: context)
    }

    /// CPU the server spent per request of a load run: the child's CPU over the run (warm-up
    /// included) over every request it answered.
    func cpuPerRequest(_ child: Child, _ clients: Int, _ run: () -> LoadResult) -> (LoadResult, Double?) {
        let before = child.cpuMicroseconds()
        let result = run()
        guard let before, let after = child.cpuMicroseconds() else { return (result, nil) }
        return (result, (after - before) / Double(max(1, result.completed + plan(clients).warmup * clients)))
    }

    func check(_ result: LoadResult, _ label: String) {
        for failure in result.failures.prefix(3) { progress("\(label): \(failure)") }
    }

    func failed(_ scenario: String, _ error: any Error) {
        progress("\(scenario) failed: \(error)")
        report.notes.append("\(scenario): failed: \(error)")
    }

    /// A load run of toggle-sized requests against a floor server (REQ/REP, any mode).
    func floorLoad(_ endpoint: String, clients: Int) -> LoadResult {
        let context = context
        return runLoad(plan(clients)) { index in
            try RequestClient(context: context, endpoint: endpoint, index: index) { _ in
                toggleRequest(index: index % 8)
            }
        }
    }

    /// A load run of toggles against a `countries serve`.
    func serviceLoad(_ endpoint: String, clients: Int) -> LoadResult {
        let context = context
        return runLoad(plan(clients)) { index in
            try RequestClient(context: context, endpoint: endpoint, index: index, body: serviceToggleBody)
        }
    }

    /// A load run of the Lua toggle-and-publish against Redis.
    func redisLoad(_ server: RedisUnderTest, clients: Int) -> LoadResult {
        let port = server.port
        let sha = server.sha
        return runLoad(plan(clients)) { index in try RedisToggler(port: port, sha: sha, index: index) }
    }

    /// A load run of toggle-sized requests against a floor server started for it (and stopped).
    func runFloor(_ mode: FloorServer.Mode, clients: Int, what: String) throws -> LoadResult {
        let server = try floorServer(mode)
        defer { server.stop() }
        let result = floorLoad(server.command, clients: clients)
        check(result, what)
        return result
    }
}
