/// Latency figures in microseconds, from nanosecond samples.
public struct Percentiles: Codable, Sendable {
    /// How many samples.
    public var count: Int
    /// The median, in µs (NaN without samples).
    public var p50: Double
    /// The 99th percentile, in µs.
    public var p99: Double
    /// The largest sample, in µs.
    public var max: Double

    /// The figures of `samples` (nanoseconds): nearest rank, rounded up.
    public init(nanos samples: [UInt64]) {
        let sorted = samples.sorted()
        count = sorted.count
        func at(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return Double(sorted[Swift.max(0, index)]) / 1000
        }
        p50 = at(0.5)
        p99 = at(0.99)
        self.max = at(1)
    }
}
