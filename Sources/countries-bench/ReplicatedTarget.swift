import Foundation

/// One of issue 23's replicated targets (docs/BENCHMARKS.md, "Targets"): a figure of two
/// replicas on a 3-member etcd against the etcd-transaction floor on the same cluster, judged on
/// paired rounds as the single-node targets are.
struct ReplicatedTarget: PairedTarget {
    /// Where the clients send their changes.
    enum Placement {
        /// Every client on the elected writer.
        case writer
        /// Plain REQ clients, client i on replica i mod 2: half of them through the follower,
        /// which forwards (what a client of any ZeroMQ binding gets).
        case spread
        /// The project's client given both replicas, client i starting at replica i mod 2: it
        /// asks `status` which one writes and sends its changes there (docs/PROTOCOL.md,
        /// "Clients of replicas").
        case spreadToWriter

        /// Whether the clients start spread over both replicas, with none refused as a condition.
        var isSpread: Bool { self != .writer }
    }

    var figure: String
    /// The rows' name for each round.
    var scenario: String
    var placement: Placement
    var clients: Int
    var throughput: Bool
    var limit: Double
    var baselineName: String { "etcd transaction" }

    /// The bound in words, for the rows.
    var bound: String {
        let limit = String(format: "%g", limit)
        return throughput
            ? "≥ \(limit)× etcd transaction\(placement.isSpread ? ", none refused" : "")"
            : "≤ \(limit)× etcd transaction"
    }

    static let all = [
        ReplicatedTarget(
            figure: "replicated 1-client toggle p50", scenario: "toggle replicated, 1 client on the writer",
            placement: .writer, clients: 1, throughput: false, limit: 1.2),
        ReplicatedTarget(
            figure: "replicated 16 clients on one replica toggles/s",
            scenario: "toggle replicated, 16 clients on the writer", placement: .writer, clients: 16,
            throughput: true, limit: 2.0),
        ReplicatedTarget(
            figure: "replicated 16 clients over two replicas toggles/s",
            scenario: "toggle replicated, 16 clients over two replicas", placement: .spread, clients: 16,
            throughput: true, limit: 2.0),
        ReplicatedTarget(
            figure: "replicated 16 project clients over two replicas toggles/s",
            scenario: "toggle replicated, 16 project clients over two replicas, told the writer",
            placement: .spreadToWriter, clients: 16, throughput: true, limit: 2.0),
    ]
}
