/// How much load: `clients` threads, each stopping after `requests` round trips or `seconds`,
/// after `warmup` untimed ones.
public struct LoadPlan: Sendable {
    /// Client threads, each with a connection of its own.
    public var clients: Int
    /// Timed round trips per client, at most.
    public var requests: Int
    /// How long the timed part lasts, at most.
    public var seconds: Double
    /// Untimed round trips per client before the timed part (connections made, caches warm).
    public var warmup: Int

    /// A plan.
    public init(clients: Int, requests: Int, seconds: Double, warmup: Int) {
        self.clients = clients
        self.requests = requests
        self.seconds = seconds
        self.warmup = warmup
    }
}
