import SystemSupport

/// Runs `plan.clients` threads, each with a connection from `connect`, all timed together: each
/// does its warm-up, waits for the others, then round trips until its count or the time is up.
public func runLoad(_ plan: LoadPlan, connect: @escaping @Sendable (Int) throws -> any RoundTripper)
    -> LoadResult
{
    /// What one client thread measured.
    struct ClientOutcome: Sendable {
        var samples: [UInt64] = []
        var start: UInt64 = 0
        var end: UInt64 = 0
        var failure: String?
    }
    let outcomes = Locked<[ClientOutcome]>([])
    let barrier = Barrier(parties: plan.clients)
    let cpuBefore = processCPUMicroseconds()
    runThreads(plan.clients) { index in
        var outcome = ClientOutcome()
        var client: (any RoundTripper)?
        do {
            var connected = try connect(index)
            for _ in 0..<plan.warmup { try connected.roundTrip() }
            client = connected
        } catch {
            outcome.failure = "client \(index): \(error)"
        }
        barrier.wait()
        if var client {
            outcome.samples.reserveCapacity(min(plan.requests, 1 << 20))
            outcome.start = nowNanos()
            let deadline = outcome.start + UInt64(plan.seconds * 1e9)
            var now = outcome.start
            do {
                while outcome.samples.count < plan.requests && now < deadline {
                    let before = now
                    try client.roundTrip()
                    now = nowNanos()
                    outcome.samples.append(now - before)
                }
            } catch {
                outcome.failure = "client \(index): \(error)"
            }
            outcome.end = nowNanos()
        }
        let finished = outcome
        outcomes.withLock { $0.append(finished) }
    }
    let cpu = processCPUMicroseconds() - cpuBefore
    let all = outcomes.current
    let samples = all.flatMap(\.samples)
    let started = all.filter { $0.start > 0 }
    let span = (started.map(\.end).max() ?? 0) - (started.map(\.start).min() ?? 0)
    return LoadResult(
        latency: Percentiles(nanos: samples),
        perSecond: span > 0 ? Double(samples.count) / (Double(span) / 1e9) : 0,
        completed: samples.count,
        failures: all.compactMap(\.failure),
        clientCPUPerRequest: cpu / Double(max(1, samples.count + plan.warmup * plan.clients)))
}
