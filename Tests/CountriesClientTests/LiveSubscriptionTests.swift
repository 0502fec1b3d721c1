import CountriesClient
import CountriesCore
import Foundation
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

/// What one subscription told its view, checked as it arrives: every `.applied` is exactly one
/// past the replica's previous seq (docs/PROTOCOL.md, "Staying in sync").
private struct NotificationLog {
    var seq: UInt64?
    var applied = 0
    var snapshots = 0
    var wentStale = false
    var problems: [String] = []

    mutating func record(_ notifications: [SubscriptionMachine.Notification]) {
        for notification in notifications {
            switch notification {
            case .replaced(let snapshot):
                seq = snapshot
                snapshots += 1
            case .applied(let event):
                if let seq, event.seq != seq + 1 {
                    problems.append("applied \(event.seq) on a replica at \(seq)")
                } else if seq == nil {
                    problems.append("applied \(event.seq) before any snapshot")
                }
                seq = event.seq
                applied += 1
            case .phaseChanged(.stale):
                wentStale = true
            case .phaseChanged:
                break
            case .rejected(let seq, let reason):
                problems.append("rejected \(seq): \(reason)")
            }
        }
    }
}

/// Drives subscriptions the way `watch` does (one poll over their sockets, then process and
/// tick), skipping the ones that are paused.
private struct SubscriptionPump {
    let subscriptions: [LiveSubscription]
    var logs: [NotificationLog]
    var paused: Set<Int> = []

    init(_ subscriptions: [LiveSubscription]) {
        self.subscriptions = subscriptions
        logs = Array(repeating: NotificationLog(), count: subscriptions.count)
    }

    mutating func start() {
        let now = ContinuousClock.now
        for (index, subscription) in subscriptions.enumerated() {
            logs[index].record(subscription.start(now: now).notifications)
        }
    }

    /// A paused reader wakes up: its timer fires before it reads (it slept past its deadline).
    mutating func resume(_ index: Int) {
        paused.remove(index)
        logs[index].record(subscriptions[index].tick(now: .now).notifications)
    }

    /// One turn of the loop: waits at most 50 ms.
    mutating func turn() throws {
        var poller = Poller()
        var registrations: [Int: LiveSubscription.Registration] = [:]
        let active = subscriptions.indices.filter { !paused.contains($0) }
        for index in active { registrations[index] = subscriptions[index].register(in: &poller) }
        var now = ContinuousClock.now
        let soonest = active.compactMap { subscriptions[$0].nextDeadline }.min() ?? now + .milliseconds(50)
        let wait = min(50, max(0, Int((soonest - now) / .milliseconds(1)) + 1))
        let ready = try poller.poll(timeoutMilliseconds: wait)
        now = ContinuousClock.now
        for index in active {
            guard let registration = registrations[index] else { continue }
            logs[index].record(subscriptions[index].process(ready, registration, now: now).notifications)
            logs[index].record(subscriptions[index].tick(now: now).notifications)
        }
    }

    /// Turns the loop until `condition` holds or `limit` times ``testSlowdown`` has passed.
    mutating func run(upTo limit: Duration, until condition: (SubscriptionPump) -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + limit * testSlowdown
        while !condition(self) {
            if ContinuousClock.now >= deadline { return false }
            try turn()
        }
        return true
    }

    func isLive(_ index: Int, at seq: UInt64? = nil) -> Bool {
        guard subscriptions[index].phase == .live, let replica = subscriptions[index].replica else {
            return false
        }
        return seq.map { replica.seq == $0 } ?? true
    }
}

@Suite("LiveSubscription over a real service", .serialized)
struct LiveSubscriptionTests {
    @Test("three subscriptions, one of them a slow reader, converge after concurrent toggles")
    func convergeAfterConcurrentToggles() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let context = try Context()
        let endpoints = LiveSubscription.Endpoints(
            command: service.commandEndpoint, events: service.eventsEndpoint)
        let subscriptions = try (0..<3).map { _ in
            try LiveSubscription(
                context: context, endpoints: endpoints, heartbeatInterval: .milliseconds(100),
                requestTimeout: .seconds(2))
        }
        var pump = SubscriptionPump(subscriptions)
        pump.start()
        #expect(try pump.run(upTo: .seconds(10)) { pump in (0..<3).allSatisfy { pump.isLive($0, at: 0) } })

        // The slow reader stops reading while the others follow the toggles.
        let slow = 2
        pump.paused.insert(slow)
        let pausedAt = ContinuousClock.now
        let clients = 4
        let togglesPerClient = 750
        let finished = Locked(0)
        let failures = Locked<[String]>([])
        let endpoint = service.commandEndpoint
        for client in 0..<clients {
            Thread {
                defer { finished.withLock { $0 += 1 } }
                do {
                    let context = try Context()
                    let commands = CommandClient(context: context, endpoint: endpoint, timeout: .seconds(2))
                    for toggle in 0..<togglesPerClient {
                        let index = (client * 3 + toggle * 5) % 8
                        let reply = try commands.send(.change(.toggle(.index(index))))
                        if !reply.ok {
                            failures.withLock {
                                $0.append("toggle refused: \(String(describing: reply.error))")
                            }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("client \(client): \(error)") }
                }
            }.start()
        }
        let togglersDone = try pump.run(upTo: .seconds(60)) { _ in finished.withLock { $0 } == clients }
        #expect(togglersDone)
        #expect(failures.withLock { $0 } == [])
        // It slept through more than the silence window (three heartbeats): it must notice
        // before catching up. A fast machine makes the toggles in less than that.
        let silence = .milliseconds(300) * testSlowdown + .milliseconds(200)
        _ = try pump.run(upTo: .seconds(5)) { _ in ContinuousClock.now - pausedAt >= silence }
        pump.resume(slow)

        let list = try service.list()
        let serviceSeq = try #require(list.seq)
        #expect(serviceSeq == UInt64(clients * togglesPerClient))
        let converged = try pump.run(upTo: .seconds(15)) { pump in
            (0..<3).allSatisfy { pump.isLive($0, at: serviceSeq) }
        }
        #expect(converged)

        #expect(pump.logs[slow].wentStale)
        for (index, subscription) in subscriptions.enumerated() {
            let log = pump.logs[index]
            #expect(log.problems == [], "subscription \(index)")
            #expect(log.seq == subscription.replica?.seq, "subscription \(index)")
            #expect(subscription.replica?.rows == list.countries, "subscription \(index)")
            #expect(subscription.replica?.seq == serviceSeq, "subscription \(index)")
        }
        // The two readers that kept up applied every event one by one.
        for index in 0..<2 {
            #expect(pump.logs[index].applied == Int(serviceSeq), "subscription \(index)")
            #expect(pump.logs[index].snapshots == 1, "subscription \(index)")
        }
    }

    /// An audit's piped `watch` kept a copy of a 10,000-row list for each of 10,000 events drained
    /// at once (2.4 GB). The states one update carries stay within their bytes, and the events
    /// past them come, in order, in the next updates.
    @Test("the states of one update stay within their bytes; the rest come in the next ones")
    func theStatesOfOneUpdateStayWithinTheirBytes() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let context = try Context()
        let listBytes =
            try #require(service.list().countries).count
            * (CountriesState(
                countries: [Country(name: "x")]).copyBytes)
        let subscription = try LiveSubscription(
            context: context,
            endpoints: .init(command: service.commandEndpoint, events: service.eventsEndpoint),
            heartbeatInterval: .milliseconds(100), requestTimeout: .seconds(2), keepsStates: true,
            stateBytesPerUpdate: 3 * listBytes)
        var pump = SubscriptionPump([subscription])
        pump.start()
        #expect(try pump.run(upTo: .seconds(10)) { $0.isLive(0, at: 0) })

        // 200 changes while the subscription reads nothing.
        let commands = CommandClient(
            context: context, endpoint: service.commandEndpoint, timeout: .seconds(2))
        for toggle in 0..<200 {
            try #require(try commands.send(.change(.toggle(.index(toggle % 8)))).ok)
        }
        Thread.sleep(forTimeInterval: 0.2 * Double(testSlowdown))

        var sizes: [Int] = []
        var seqs: [UInt64] = []
        let deadline = ContinuousClock.now + .seconds(20) * testSlowdown
        while seqs.last != 200, ContinuousClock.now < deadline {
            var poller = Poller()
            let registration = subscription.register(in: &poller)
            let ready = try poller.poll(timeoutMilliseconds: 50)
            for out in [subscription.process(ready, registration, now: .now), subscription.tick(now: .now)]
            where !out.states.isEmpty {
                sizes.append(out.states.count)
                seqs += out.states.map(\.seq)
            }
        }
        #expect(seqs == Array(1...200))
        // Three lists' worth, and the few read with the last of them.
        #expect(sizes.max() ?? 0 <= 3 + 8, "states per update: \(sizes)")
    }

    /// The audit's case: a publisher's heartbeat padded to 60 MB of `{}`s was parsed whole
    /// (1 GB in the subscriber). A body over the largest its topic can have is dropped before it
    /// is parsed: this padded heartbeat claims seq 99, and the old subscriber took it for a gap.
    @Test("a body over the largest of its topic is dropped before it is parsed")
    func anOversizedEventIsDroppedUnparsed() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let directory = try ScratchDirectory(prefix: "oversized")
        defer { directory.remove() }
        let context = try Context()
        let hostile = try context.makeSocket(.pub)
        defer { hostile.close() }
        try hostile.setOption(.linger, 0)
        try hostile.bind(directory.ipc("hostile"))
        let subscription = try LiveSubscription(
            context: context,
            endpoints: .init(
                commands: [service.commandEndpoint],
                events: [service.eventsEndpoint, directory.ipc("hostile")]),
            // Silence is not what this test is about: stale only after 3 s of it (times the
            // slowdown).
            heartbeatInterval: .seconds(1) * testSlowdown, requestTimeout: .seconds(2) * testSlowdown)
        var pump = SubscriptionPump([subscription])
        pump.start()
        #expect(try pump.run(upTo: .seconds(10)) { $0.isLive(0, at: 0) })
        let padding = String(repeating: "x", count: EventShape.maximumBodyBytes(.heartbeat))
        let padded = Data(#"{"pad":"\#(padding)","seq":99,"topic":"heartbeat"}"#.utf8)
        let sent = ContinuousClock.now
        _ = try pump.run(upTo: .seconds(1)) { _ in
            _ = try? hostile.send([Data("heartbeat".utf8), padded], dontWait: true)
            return ContinuousClock.now - sent >= .milliseconds(500) * testSlowdown
        }
        #expect(!pump.logs[0].wentStale, "the padded heartbeat was taken: \(subscription.phase)")
        #expect(pump.isLive(0, at: 0))
        #expect(pump.logs[0].problems == [])
    }

    @Test("a subscription goes stale when the service is silent and live again when it answers")
    func staleWhileSilentThenLive() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let context = try Context()
        let subscription = try LiveSubscription(
            context: context,
            endpoints: .init(command: service.commandEndpoint, events: service.eventsEndpoint),
            heartbeatInterval: .milliseconds(100), requestTimeout: .milliseconds(500))
        var pump = SubscriptionPump([subscription])
        pump.start()
        #expect(try pump.run(upTo: .seconds(10)) { $0.isLive(0) })
        // The slow reader itself, not a synchronization: 600 ms unread is six missed heartbeats.
        pump.paused.insert(0)
        usleep(600_000)
        pump.resume(0)
        guard case .stale(let reason) = subscription.phase else {
            Issue.record("expected stale, got \(subscription.phase)")
            return
        }
        #expect(reason.contains("heartbeat"))
        #expect(try pump.run(upTo: .seconds(10)) { $0.isLive(0, at: 0) })
        #expect(pump.logs[0].problems == [])
    }
}
