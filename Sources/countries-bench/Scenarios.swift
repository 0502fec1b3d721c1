import CountriesClient
import CountriesCore
import CountriesTerminal
import Foundation
import LoadGeneration
import SystemSupport
import ZeroMQ

// MARK: Late joiner

/// How long a new LiveSubscription takes to be live, and the bare `list` round trip beside it.
struct LateJoinerResult: Codable, Sendable {
    var rows: Int
    var eventsPerSecond: Double
    var joinMilliseconds: [Double]
    var listMilliseconds: [Double]
}

/// A one-name-per-line seed file of `count` generated names.
func writeSeedFile(count: Int, in directory: String) throws -> String {
    let path = "\(directory)/seed-\(count).txt"
    let names = (0..<count).map { String(format: "Country %05d", $0) }
    try (names.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

func runLateJoiner(binary: String, joins: Int, rate: Int, rows: Int) throws -> LateJoinerResult {
    let directory = try makeTemporaryDirectory("late")
    let seed = try writeSeedFile(count: rows, in: directory)
    let context = try Context()
    defer { context.terminate() }
    let service = try ServiceUnderTest(binary: binary, seedFile: seed, context: context)
    defer { service.stop() }

    // The background flow: `rate` toggles a second from a thread of its own.
    let stop = Locked(false)
    let sent = Locked(0)
    let flowDone = DispatchSemaphore(value: 0)
    let command = service.command
    let flow = Thread {
        defer { flowDone.signal() }
        guard let socket = try? context.makeSocket(.req) else { return }
        defer { socket.close() }
        try? socket.setOption(.linger, 0)
        try? socket.setOption(.receiveTimeout, 5_000)
        guard (try? socket.connect(command)) != nil else { return }
        let interval = 1_000_000_000 / UInt64(rate)
        let start = nowNanos()
        var number: UInt64 = 0
        while !stop.current {
            sleep(until: start + number * interval)
            number += 1
            let body = toggleRequest(index: Int.random(in: 0..<rows))
            guard (try? socket.send([body])) != nil, (try? socket.receive()) != nil else { return }
            sent.withLock { $0 += 1 }
        }
    }
    let flowStart = nowNanos()
    flow.start()
    defer {
        stop.withLock { $0 = true }
        flowDone.wait()
    }
    usleep(200_000)

    var joinTimes: [Double] = []
    for _ in 0..<joins {
        let start = nowNanos()
        let subscription = try LiveSubscription(
            context: context, endpoints: .init(command: service.command, events: service.events))
        _ = subscription.start(now: .now)
        var live = false
        while nowNanos() - start < 5_000_000_000 {
            var poller = Poller()
            let registration = subscription.register(in: &poller)
            let ready = try poller.poll(timeoutMilliseconds: 20)
            _ = subscription.process(ready, registration, now: .now)
            _ = subscription.tick(now: .now)
            if case .live = subscription.phase {
                live = true
                break
            }
        }
        guard live else { throw BenchError("a late joiner was not live after 5 s") }
        joinTimes.append(Double(nowNanos() - start) / 1e6)
        usleep(50_000)
    }

    // The baseline: one bare `list` round trip on the same list, under the same flow.
    let lister = try context.makeSocket(.req)
    defer { lister.close() }
    try lister.setOption(.linger, 0)
    try lister.setOption(.receiveTimeout, 5_000)
    try lister.connect(service.command)
    var listTimes: [Double] = []
    for _ in 0..<joins {
        let start = nowNanos()
        try lister.send([Data(#"{"op":"list"}"#.utf8)])
        guard try lister.receive() != nil else { throw BenchError("list: no reply within 5 s") }
        listTimes.append(Double(nowNanos() - start) / 1e6)
    }
    let elapsed = Double(nowNanos() - flowStart) / 1e9
    return LateJoinerResult(
        rows: rows, eventsPerSecond: Double(sent.current) / elapsed, joinMilliseconds: joinTimes,
        listMilliseconds: listTimes)
}

// MARK: Render

/// Bytes the watch renderer writes per event, and frames drawn under a burst.
struct RenderResult: Codable, Sendable {
    var rows: Int
    var fullRedrawBytes: Int
    var bytesPerVisibleToggle: Double
    var bytesPerAnyRowToggle: Double
    var bytesPerVisibleToggleLongList: Double
    var longListRows: Int
    var burstFramesPerSecond: Double
    var burstEventsPerSecond: Double
    var microsecondsPerFrame: Double
}

/// What `countries watch` draws, without the terminal: the same TableView and FrameRenderer.
private struct WatchModel {
    var state: CountriesState
    var renderer = FrameRenderer(color: true)
    var scrollOffset = 0
    var lastEvent: Event?
    let size = ViewportSize(rows: 40, columns: 100)

    init(countries: [Country]) { state = CountriesState(countries: countries) }

    /// The bytes of the next frame.
    mutating func draw() -> Int {
        let view = TableView(
            header: HeaderModel(
                title: "countries watch",
                endpoints: "commands \(Defaults.commandEndpoint) · events \(Defaults.eventsEndpoint)",
                phase: .live, seq: state.seq),
            footer: FooterModel(
                summary: FooterModel.summary(of: state),
                lastChange: lastEvent.map { LastChange.describe($0, age: .zero) }),
            cursor: nil, highlighted: lastEvent?.country?.index, scrollOffset: scrollOffset)
        let layout = view.layout(LiveDataSource(state: state), in: size)
        scrollOffset = layout.scrollOffset
        return renderer.render(layout.frame).count
    }

    mutating func toggle(_ index: Int) {
        lastEvent = try? state.apply(.toggle(.index(index)), seed: []).event
    }
}

func runRender(burstSeconds: Double, longListRows: Int) -> RenderResult {
    var world = WatchModel(countries: SeedList.world)
    let full = world.draw()
    let visibleRows = 20
    var visibleBytes = 0
    let toggles = 200
    for number in 0..<toggles {
        world.toggle(number % visibleRows)
        visibleBytes += world.draw()
    }
    var anyBytes = 0
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<toggles {
        world.toggle(Int.random(in: 0..<world.state.count, using: &generator))
        anyBytes += world.draw()
    }
    var long = WatchModel(
        countries: (0..<longListRows).map { Country(name: String(format: "Country %05d", $0)) })
    _ = long.draw()
    var longBytes = 0
    for number in 0..<toggles {
        long.toggle(number % visibleRows)
        longBytes += long.draw()
    }

    // A burst: events as fast as they can be applied, frames paced by the FrameCoalescer.
    var burst = WatchModel(countries: SeedList.world)
    _ = burst.draw()
    var coalescer = FrameCoalescer<ContinuousClock.Instant>()
    var frames = 0
    var events = 0
    var drawing: UInt64 = 0
    let start = nowNanos()
    let end = start + UInt64(burstSeconds * 1e9)
    while nowNanos() < end {
        burst.toggle(events % visibleRows)
        events += 1
        let now = ContinuousClock.now
        coalescer.markDirty(now: now)
        if coalescer.drawIfDue(now: now) {
            let before = nowNanos()
            _ = burst.draw()
            drawing += nowNanos() - before
            frames += 1
        }
    }
    let seconds = Double(nowNanos() - start) / 1e9
    return RenderResult(
        rows: world.state.count, fullRedrawBytes: full,
        bytesPerVisibleToggle: Double(visibleBytes) / Double(toggles),
        bytesPerAnyRowToggle: Double(anyBytes) / Double(toggles),
        bytesPerVisibleToggleLongList: Double(longBytes) / Double(toggles), longListRows: longListRows,
        burstFramesPerSecond: Double(frames) / seconds, burstEventsPerSecond: Double(events) / seconds,
        microsecondsPerFrame: frames > 0 ? Double(drawing) / Double(frames) / 1000 : 0)
}

// MARK: CLI

/// Wall times of `countries toggle` processes, and of `/bin/true` (the cost of any process).
struct CLIResult: Codable, Sendable {
    var toggleMilliseconds: [Double]
    var trueMilliseconds: [Double]
}

func runCLI(binary: String, runs: Int) throws -> CLIResult {
    let context = try Context()
    defer { context.terminate() }
    let service = try ServiceUnderTest(binary: binary, context: context)
    defer { service.stop() }
    var toggles: [Double] = []
    var trues: [Double] = []
    let truePath = FileManager.default.isExecutableFile(atPath: "/bin/true") ? "/bin/true" : "/usr/bin/true"
    for _ in 0..<runs {
        let (status, nanos) = try runToEnd(binary, ["toggle", "France", "--command", service.command])
        guard status == 0 else { throw BenchError("countries toggle exited with \(status)") }
        toggles.append(Double(nanos) / 1e6)
        trues.append(Double(try runToEnd(truePath, []).nanos) / 1e6)
    }
    return CLIResult(toggleMilliseconds: toggles, trueMilliseconds: trues)
}
