/// One of issue 13's four load targets: the figure, its baseline and its bound. The paired
/// rounds and the verdicts are both built from ``LoadTarget/all``, so a target's name is written
/// once.
struct LoadTarget: PairedTarget {
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

    var baselineName: String { baseline.rawValue }
}
