/// Observations counted into fixed buckets, as a Prometheus histogram holds them: how many fell
/// at or below each upper bound, their sum and their count. A plain value; the exposition
/// (``MetricsText``) writes the buckets cumulative.
public struct Histogram: Equatable, Sendable {
    /// The buckets' upper bounds, increasing; `+Inf` is implied after the last.
    public let upperBounds: [Double]
    /// Observations per bucket, not cumulative: index `i` counts those in
    /// (`upperBounds[i-1]`, `upperBounds[i]`], the last index those above every bound.
    public private(set) var bucketCounts: [UInt64]
    /// The sum of every observation.
    public private(set) var sum: Double = 0
    /// How many observations there were.
    public private(set) var count: UInt64 = 0

    /// An empty histogram over `upperBounds` (sorted and made unique here).
    public init(upperBounds: [Double]) {
        self.upperBounds = Array(Set(upperBounds.filter(\.isFinite))).sorted()
        bucketCounts = Array(repeating: 0, count: self.upperBounds.count + 1)
    }

    /// Counts one observation.
    public mutating func observe(_ value: Double) {
        // A binary search: the first bound the value does not exceed.
        var low = 0
        var high = upperBounds.count
        while low < high {
            let middle = (low + high) / 2
            if value <= upperBounds[middle] { high = middle } else { low = middle + 1 }
        }
        bucketCounts[low] += 1
        sum += value
        count += 1
    }

    /// Each bound (the last `+Inf`) with how many observations fell at or below it.
    public var cumulativeBuckets: [(upperBound: Double, count: UInt64)] {
        var running: UInt64 = 0
        var buckets: [(upperBound: Double, count: UInt64)] = []
        buckets.reserveCapacity(bucketCounts.count)
        for (index, bucket) in bucketCounts.enumerated() {
            running += bucket
            buckets.append((index < upperBounds.count ? upperBounds[index] : .infinity, running))
        }
        return buckets
    }
}
