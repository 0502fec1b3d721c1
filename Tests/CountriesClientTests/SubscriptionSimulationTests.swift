import CountriesClient
import CountriesCore
import TestSupport
import Testing

extension SplitMix64 {
    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Double) -> Bool {
        Double(next() % 1_000_000) < percent * 10_000
    }
}

/// The service as the subscriber sees it: a state, a bounded event log for `history`, and
/// every state it has been in, to check the replica against.
private struct SimulatedService {
    var state: CountriesState
    var log: [Event] = []
    /// `history` since `s` works when `s >= historyFloor`.
    var historyFloor: UInt64
    var up = true
    /// Each store gets an epoch; a replica must always equal some state of some epoch.
    var epoch = 0
    var statesSeen: [Int: [UInt64: CountriesState]] = [:]
    var eventsSeen: [Int: [UInt64: Event]] = [:]
    var added = 0
    /// Whether the service names its store (protocol v1.1) in events, heartbeats and replies.
    let namesStore: Bool
    /// Most events in one `history` reply (v1.1 paging); unbounded in v1.
    let historyPage: Int

    init(seq: UInt64, namesStore: Bool) {
        state = CountriesState(countries: SeedList.standard, seq: seq)
        historyFloor = seq
        self.namesStore = namesStore
        historyPage = namesStore ? 5 : Int.max
        remember()
    }

    /// The store id of an epoch, as the service would name it.
    static func store(of epoch: Int) -> String { "store-\(epoch)" }

    /// The current store's id, when the service names it.
    var store: String? { namesStore ? Self.store(of: epoch) : nil }

    mutating func remember() {
        statesSeen[epoch, default: [:]][state.seq] = state
    }

    /// Makes one random change and returns its event (nil when it changed nothing).
    mutating func change(_ random: inout SplitMix64) -> Event? {
        let roll = random.below(100)
        let change: Change
        if roll < 55 || state.count == 0 {
            change =
                state.count == 0 ? .add(name: "Land \(added)") : .toggle(.index(random.below(state.count)))
        } else if roll < 70 {
            change = .set(.index(random.below(state.count)), visited: random.chance(50))
        } else if roll < 84, state.count < 40 {
            added += 1
            change = .add(name: "Land \(added)", visited: random.chance(30))
        } else if roll < 98, state.count > 2 {
            change = .remove(.index(random.below(state.count)))
        } else {
            change = .reset
        }
        guard var event = try? state.apply(change, seed: SeedList.standard).event else { return nil }
        event.store = store
        log.append(event)
        if log.count > 100 {
            log.removeFirst(log.count - 100)
            historyFloor = log[0].seq - 1
        }
        eventsSeen[epoch, default: [:]][event.seq] = event
        remember()
        return event
    }

    /// `history` since `seq`: a page of the events after it and whether more follow, or nil
    /// for `history_truncated`.
    func history(since seq: UInt64) -> (events: [Event], more: Bool)? {
        guard seq >= historyFloor, seq <= state.seq else { return nil }
        let after = log.filter { $0.seq > seq }
        return (Array(after.prefix(historyPage)), after.count > historyPage)
    }

    /// How a service comes back.
    enum Restart {
        /// The same store; the kept history is lost.
        case sameStore
        /// Another store at a lower seq (visible to v1 clients through heartbeats).
        case lowerStore
        /// Another store at the same or a higher seq: only its id tells it apart (v1.1).
        case newStoreSameSeq
    }

    /// Comes back up as `restart` says.
    mutating func restart(_ restart: Restart, _ random: inout SplitMix64) {
        up = true
        log = []
        if restart != .sameStore {
            epoch += 1
            var countries = SeedList.standard
            countries[random.below(countries.count)].visited.toggle()
            var seq = state.seq
            if restart == .lowerStore {
                let back = UInt64(60 + random.below(300))
                seq = seq > back ? seq - back : 0
            } else {
                seq += UInt64(random.below(3))
            }
            state = CountriesState(countries: countries, seq: seq)
            remember()
        }
        historyFloor = state.seq
    }
}

private enum Message {
    case event(Event)
    case heartbeat(UInt64, String?)
}

/// Drives a machine against a simulated service over a lossy network, in 10 ms steps.
private struct Simulation {
    var random: SplitMix64
    var service: SimulatedService
    var machine = SubscriptionMachine()
    let t0 = ContinuousClock.now
    var now = 0
    /// The PUB channel: in order, each message with the millisecond it arrives.
    var pub: [(at: Int, message: Message)] = []
    var lastArrival = 0
    /// The one request in flight and when it was sent.
    var pending: (action: SubscriptionMachine.Action, sentAt: Int, answerAt: Int)?
    /// The replica's seq as the notifications tell it.
    var notifiedSeq: UInt64?
    // Chaos: until when each disturbance lasts.
    var partitionUntil = 0
    var downUntil = 0
    var pausedUntil = 0
    var restartKind = SimulatedService.Restart.sameStore
    var dropPercent = 5.0
    var duplicatePercent = 2.0
    var stats: [String: Int] = [:]

    /// The state after the last replica change, as the outputs' states told it.
    var shownState: CountriesState?

    init(seed: UInt64, namesStore: Bool) {
        random = SplitMix64(seed: seed)
        service = SimulatedService(seq: UInt64(random.below(1000)), namesStore: namesStore)
    }

    var instant: ContinuousClock.Instant { t0 + .milliseconds(now) }

    mutating func publish(_ message: Message, reliably: Bool = false) {
        guard reliably || (now >= partitionUntil && !random.chance(dropPercent)) else { return }
        lastArrival = max(lastArrival, now + random.below(40))
        pub.append((lastArrival, message))
        if !reliably && random.chance(duplicatePercent) { pub.append((lastArrival, message)) }
    }

    mutating func handle(_ output: SubscriptionMachine.Output) throws {
        for action in output.actions {
            try #require(pending == nil, "two requests outstanding at \(now) ms")
            pending = (action, now, now + 1 + random.below(150))
            stats["\(action)".hasPrefix("requestSnapshot") ? "snapshots" : "histories", default: 0] += 1
        }
        // Each replica change comes with the state it left: a snapshot's, or the one before
        // with the event replayed (the oracle keeps its own copy; the consumers need none).
        var states = output.states.makeIterator()
        for notification in output.notifications {
            switch notification {
            case .replaced(let seq):
                let next = states.next()
                let state = try #require(next, "no state for the snapshot at \(seq)")
                try #require(state.seq == seq, "the snapshot's state is at \(state.seq), not \(seq)")
                shownState = state
                notifiedSeq = seq
                stats["replaced", default: 0] += 1
            case .applied(let event):
                var expected = try #require(shownState, "applied \(event.seq) before any state")
                try expected.replay(event)
                try #require(
                    states.next() == expected, "the state after \(event.seq) is not the one before plus it")
                shownState = expected
                let previous = try #require(notifiedSeq, "applied \(event.seq) before any snapshot")
                try #require(event.seq == previous + 1, "applied \(event.seq) after \(previous)")
                try #require(
                    service.eventsSeen.values.contains { $0[event.seq] == event },
                    "applied an event the service never made: \(event)")
                notifiedSeq = event.seq
                stats["applied", default: 0] += 1
            case .phaseChanged(let phase):
                if case .stale = phase { stats["stale", default: 0] += 1 }
            case .rejected(let seq, let reason):
                Issue.record("the service's event \(seq) was rejected: \(reason)")
            }
        }
        let extra = states.next()
        try #require(extra == nil, "more states than replica changes")
        try #require(machine.replica?.seq == notifiedSeq, "notifications disagree with the replica")
        if !output.states.isEmpty { try #require(output.states.last == machine.replica) }
        if machine.phase == .live, let replica = machine.replica {
            if service.namesStore {
                // With store ids the replica must be a state of the very store it names.
                let epoch = try #require(
                    service.statesSeen.keys.first { SimulatedService.store(of: $0) == machine.store },
                    "live without a known store: \(String(describing: machine.store))")
                try #require(
                    service.statesSeen[epoch]?[replica.seq] == replica,
                    "live with a replica store \(epoch) never had at \(replica.seq)")
            } else {
                try #require(
                    service.statesSeen.values.contains { $0[replica.seq] == replica },
                    "live with a replica the service never had at \(replica.seq)")
            }
        }
    }

    mutating func answer() throws {
        guard let request = pending else { return }
        let reachable = service.up && now >= partitionUntil
        if !reachable || now >= request.sentAt + 1000 {
            // No reply: the driver's timeout reports it a second after sending.
            guard now >= request.sentAt + 1000 else { return }
            pending = nil
            stats["timeouts", default: 0] += 1
            try handle(machine.requestFailed(request.action, truncated: false, now: instant))
            return
        }
        guard now >= request.answerAt else { return }
        pending = nil
        switch request.action {
        case .requestSnapshot:
            try handle(
                machine.receiveSnapshot(
                    rows: service.state.rows, seq: service.state.seq, store: service.store, now: instant))
        case .requestHistory(let since):
            if let page = service.history(since: since) {
                if page.more { stats["pages", default: 0] += 1 }
                try handle(
                    machine.receiveHistory(page.events, store: service.store, more: page.more, now: instant))
            } else {
                stats["truncated", default: 0] += 1
                try handle(machine.requestFailed(request.action, truncated: true, now: instant))
            }
        }
    }

    /// One 10 ms step; `chaos` allows outages, partitions and restarts.
    mutating func step(chaos: Bool, changePercent: Double) throws {
        now += 10
        if chaos && now >= downUntil && now >= partitionUntil && now >= pausedUntil {
            if random.chance(0.05) {
                partitionUntil = now + 500 + random.below(6000)
                stats["partitions", default: 0] += 1
            } else if random.chance(service.namesStore ? 0.12 : 0.05) {
                service.up = false
                downUntil = now + 500 + random.below(6000)
                let roll = random.below(100)
                restartKind =
                    roll < 30 ? .lowerStore : roll < 75 && service.namesStore ? .newStoreSameSeq : .sameStore
                if service.namesStore && stats["newStoreSameSeq restarts", default: 0] == 0 {
                    restartKind = .newStoreSameSeq  // the case only ids tell apart, at least once
                }
                stats["\(restartKind) restarts", default: 0] += 1
            }
        }
        if !service.up && now >= downUntil {
            service.restart(restartKind, &random)
            if restartKind == .lowerStore && !service.namesStore {
                // A store swap is only visible through heartbeats (protocol v1 has no store id):
                // hold changes until the lower seq has been seen, so it is a fair test.
                pausedUntil = now + 4000
                publish(.heartbeat(service.state.seq, service.store), reliably: true)
            }
        }
        if service.up && now >= pausedUntil && random.chance(changePercent),
            let event = service.change(&random)
        {
            publish(.event(event))
        }
        if service.up && now % 1000 == 0 {
            publish(.heartbeat(service.state.seq, service.store), reliably: now < pausedUntil)
        }
        while let first = pub.first, first.at <= now {
            pub.removeFirst()
            switch first.message {
            case .event(let event): try handle(machine.receive(event, now: instant))
            case .heartbeat(let seq, let store):
                try handle(machine.receive(Heartbeat(seq: seq, store: store), now: instant))
            }
        }
        try answer()
        if let deadline = machine.nextDeadline(), deadline <= instant {
            try handle(machine.tick(now: instant))
        }
    }

    mutating func run() throws {
        try handle(machine.start(now: instant))
        // About 60 s of noise: ~40 changes a second, drops, duplicates, outages, restarts.
        for _ in 0..<6000 { try step(chaos: true, changePercent: 40) }
        // Then a calm network: the replica must catch up by itself and go live.
        dropPercent = 0
        duplicatePercent = 0
        for _ in 0..<500 { try step(chaos: false, changePercent: 20) }
        var calm = 0
        while calm < 3000, !(machine.phase == .live && machine.replica == service.state && pub.isEmpty) {
            try step(chaos: false, changePercent: 0)
            calm += 1
        }
    }
}

@Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
func aReplicaConvergesThroughLossDuplicatesOutagesAndRestarts(seed: UInt64) throws {
    var simulation = Simulation(seed: seed, namesStore: false)
    try simulation.run()
    #expect(simulation.machine.phase == .live, "seed \(seed)")
    #expect(simulation.machine.replica == simulation.service.state, "seed \(seed)")
    // The run must have exercised what it claims to.
    #expect(simulation.stats["applied", default: 0] > 1000, "seed \(seed): \(simulation.stats)")
    #expect(simulation.stats["replaced", default: 0] > 1, "seed \(seed): \(simulation.stats)")
    #expect(simulation.stats["histories", default: 0] > 5, "seed \(seed): \(simulation.stats)")
}

/// The same chaos against a v1.1 service: store ids, paged history, and restarts onto a new
/// store at the same or a higher seq (no pause: the id alone must tell the stores apart), with
/// every live replica checked against the store it names.
@Test(arguments: [11, 12, 13, 14, 15, 16, 17, 18] as [UInt64])
func aReplicaNeverTakesOneStoreForAnother(seed: UInt64) throws {
    var simulation = Simulation(seed: seed, namesStore: true)
    try simulation.run()
    #expect(simulation.machine.phase == .live, "seed \(seed)")
    #expect(simulation.machine.replica == simulation.service.state, "seed \(seed)")
    #expect(simulation.machine.store == simulation.service.store, "seed \(seed)")
    #expect(simulation.stats["applied", default: 0] > 1000, "seed \(seed): \(simulation.stats)")
    #expect(simulation.stats["newStoreSameSeq restarts", default: 0] > 0, "seed \(seed): \(simulation.stats)")
    #expect(simulation.stats["pages", default: 0] > 0, "seed \(seed): \(simulation.stats)")
}
