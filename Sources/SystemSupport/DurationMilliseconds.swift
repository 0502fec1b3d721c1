extension Duration {
    /// Whole milliseconds, rounded up: a wait of this many milliseconds does not end before the
    /// duration has passed. 0 for a duration of zero or less; `Int.max` past what `Int` holds.
    ///
    /// `duration / .milliseconds(1)` goes through 128-bit integers and a `Double`, about 200
    /// instructions, and a service's loop asks twice per request (docs/BENCHMARKS.md,
    /// "Stop 58"); a duration under 9 seconds, what a loop waits between heartbeats, takes one
    /// 64-bit division here.
    public var millisecondsRoundedUp: Int {
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let total = attoseconds
        guard total > 0 else { return 0 }
        if total <= Int128(Int64.max - attosecondsPerMillisecond) {
            return Int((Int64(total) + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond)
        }
        let milliseconds = (total + Int128(attosecondsPerMillisecond - 1)) / Int128(attosecondsPerMillisecond)
        return milliseconds > Int128(Int.max) ? Int.max : Int(milliseconds)
    }
}
