/// Round-trip latency and throughput of one load run.
public struct LoadResult: Codable, Sendable {
    /// The timed round trips' latencies.
    public var latency: Percentiles
    /// Timed round trips per second, over the span from the first client's start to the last
    /// one's end.
    public var perSecond: Double
    /// Timed round trips completed.
    public var completed: Int
    /// One line per client that failed (`client 3: no reply within 5 s`).
    public var failures: [String]
    /// The load generator's own CPU (this process: its client threads and their libzmq I/O
    /// thread) per round trip, warm-up included. The clients share this machine's cores with
    /// the server, so a client that costs more leaves its server less.
    public var clientCPUPerRequest: Double?

    /// A result.
    public init(
        latency: Percentiles, perSecond: Double, completed: Int, failures: [String],
        clientCPUPerRequest: Double?
    ) {
        self.latency = latency
        self.perSecond = perSecond
        self.completed = completed
        self.failures = failures
        self.clientCPUPerRequest = clientCPUPerRequest
    }
}
