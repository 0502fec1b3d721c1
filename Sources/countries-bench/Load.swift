import CountriesCore
import Foundation
import SystemSupport
import ZeroMQ

/// One client's connection: a round trip per call. Made and used on one thread.
protocol RoundTripper {
    /// One request and its reply; throws when the reply does not come.
    mutating func roundTrip() throws
}

/// How much load: `clients` threads, each stopping after `requests` round trips or `seconds`.
struct LoadPlan: Sendable {
    var clients: Int
    var requests: Int
    var seconds: Double
    var warmup: Int
}

/// Round-trip latency and throughput of one load run.
struct LoadResult: Codable, Sendable {
    var latency: Percentiles
    var perSecond: Double
    var completed: Int
    var failures: [String]
    /// The load generator's own CPU (this process: its client threads and their libzmq I/O
    /// thread) per round trip, warm-up included. The clients share this machine's cores with
    /// the server, so a client that costs more leaves its server less.
    var clientCPUPerRequest: Double?
}

/// Runs `plan.clients` threads, each with a connection from `connect`, all timed together.
func runLoad(_ plan: LoadPlan, connect: @escaping @Sendable (Int) throws -> any RoundTripper) -> LoadResult {
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

/// This process's user and system CPU so far, in µs (`getrusage`).
func processCPUMicroseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
    return user + Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
}

/// A plain REQ client sending toggles (to the service) or same-sized bodies (to the floor).
struct RequestClient: RoundTripper {
    private let socket: Socket
    private let body: (Int) -> Data
    private let index: Int
    /// The body of the last reply, for a client that checks what it was told.
    private(set) var lastReply: Data?

    /// Connects a REQ socket; `body` makes each request from the client's index.
    init(context: Context, endpoint: String, index: Int, body: @escaping (Int) -> Data) throws {
        socket = try context.makeSocket(.req)
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, 5_000)
        try socket.connect(endpoint)
        self.body = body
        self.index = index
    }

    mutating func roundTrip() throws {
        try socket.send([body(index)])
        guard let reply = try socket.receive(), !(reply.last?.isEmpty ?? true) else {
            throw BenchError("no reply within 5 s")
        }
        lastReply = reply.last
    }
}

/// A toggle of the client's own row (index modulo the 8 rows of the default seed).
func serviceToggleBody(_ index: Int) -> Data { toggleRequest(index: index % 8) }

/// Representative wire sizes of a toggle, from the same encoders the service uses.
enum WireSizes {
    /// A toggle reply: `{"ok":true,"seq":…,"country":{…}}`.
    static let reply: Data = {
        var state = CountriesState(countries: SeedList.standard, seq: 12_345)
        let result = try! state.apply(.toggle(.index(0)), seed: SeedList.standard)
        return result.reply.encoded()
    }()

    /// An event body like the service publishes, with `seq`.
    static func event(seq: UInt64, index: Int = 0) -> Data {
        let country = SeedList.standard[index % SeedList.standard.count]
        return Event(seq: seq, kind: .changed(IndexedCountry(country, at: index))).encoded()
    }
}
