import CountriesClient
import CountriesCore
import TestSupport
import Testing

/// A subscriber on the PUB sockets of two replicas of one service (`--events A,B`): both
/// publish every change with the same seq and body, in order, and heartbeat with the seq of
/// the last event they published; one lags behind the other. The SUB socket merges the two
/// streams, so the machine sees each event twice and heartbeats that go back and forth
/// (docs/PROTOCOL.md, "Replicas").
@Suite struct ReplicatedSubscriptionTests {
    /// One replica's stream: its messages in the order it sends them.
    private enum Message {
        case event(Event)
        case heartbeat(UInt64)
    }

    private static let store = "store-replicated"

    /// The events the service made after `start`, and each replica's stream of them.
    private static func streams(
        from start: CountriesState, count: Int, _ random: inout SplitMix64
    ) -> (events: [Event], leader: [Message], laggard: [Message]) {
        var state = start
        var events: [Event] = []
        for step in 0..<count {
            let target = random.below(state.count)
            let change: Change =
                step % 9 == 8 ? .add(name: "Land \(step)") : .toggle(.index(target))
            guard var event = try? state.apply(change, seed: SeedList.standard).event else { continue }
            event.store = store
            events.append(event)
        }
        // Each replica sends every event in order (a few lost on the way, as PUB may) and a
        // heartbeat now and then with its last seq.
        func stream(_ random: inout SplitMix64) -> [Message] {
            var messages: [Message] = []
            for event in events {
                if random.below(100) >= 5 { messages.append(.event(event)) }
                if random.below(100) < 30 { messages.append(.heartbeat(event.seq)) }
            }
            messages.append(.heartbeat(events.last?.seq ?? start.seq))
            return messages
        }
        return (events, stream(&random), stream(&random))
    }

    @Test(arguments: 1...40 as ClosedRange<UInt64>)
    func twoReplicasOneLaggingApplyEverySeqOnceAndNeverGoBack(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 7919)
        let t0 = ContinuousClock.now
        let start = CountriesState(countries: SeedList.standard, seq: UInt64(random.below(500)))
        let (events, leader, laggard) = Self.streams(from: start, count: 60, &random)
        let log = Dictionary(uniqueKeysWithValues: events.map { ($0.seq, $0) })

        var machine = SubscriptionMachine(sources: 2)
        var now = 0
        var pending: [SubscriptionMachine.Action] = []
        var seen: [UInt64] = []
        var viewSeq: UInt64?
        var replaced = 0
        func handle(_ output: SubscriptionMachine.Output) throws {
            pending += output.actions
            for notification in output.notifications {
                switch notification {
                case .replaced(let seq):
                    replaced += 1
                    try #require(
                        viewSeq.map { seq >= $0 } ?? true, "a snapshot moved the view back to \(seq)")
                    viewSeq = seq
                case .applied(let event):
                    let previous = try #require(viewSeq, "applied \(event.seq) before any snapshot")
                    try #require(event.seq == previous + 1, "applied \(event.seq) after \(previous)")
                    try #require(log[event.seq] == event, "applied an event the service never made")
                    seen.append(event.seq)
                    viewSeq = event.seq
                case .phaseChanged(let phase):
                    if case .stale(let reason) = phase {
                        try #require(!reason.contains("restarted"), "a lagging replica is not a restart")
                    }
                case .rejected(let seq, let reason):
                    Issue.record("the service's event \(seq) was rejected: \(reason)")
                }
            }
        }
        /// Answers the requests the machine asked for from the service's state now.
        func answer(upTo seq: UInt64) throws {
            // Bounded: a machine that keeps asking without progress fails the test, not hangs it.
            for _ in 0..<20 {
                guard !pending.isEmpty else { return }
                let action = pending.removeFirst()
                switch action {
                case .requestSnapshot:
                    var state = start
                    for event in events where event.seq <= seq { try state.replay(event) }
                    try handle(
                        machine.receiveSnapshot(
                            rows: state.rows, seq: state.seq, store: Self.store, now: t0 + .milliseconds(now))
                    )
                case .requestHistory(let since):
                    let page = events.filter { $0.seq > since && $0.seq <= seq }
                    try handle(machine.receiveHistory(page, store: Self.store, now: t0 + .milliseconds(now)))
                }
            }
            Issue.record("still asking after 20 answers: \(pending)")
            pending = []
        }

        try handle(machine.start(now: t0))
        try answer(upTo: start.seq)
        // Interleave the two streams at random; the laggard starts a random distance behind.
        var lead = leader[...]
        var lag = laggard[...]
        var published = start.seq
        let headStart = random.below(leader.count / 2)
        while !lead.isEmpty || !lag.isEmpty {
            now += 10
            let takeLeader =
                !lead.isEmpty
                && (lag.isEmpty || headStart > 0 && lead.startIndex < headStart
                    || random.below(100) < 50)
            let message = takeLeader ? lead.popFirst()! : lag.popFirst()!
            let instant = t0 + .milliseconds(now)
            switch message {
            case .event(let event):
                published = max(published, event.seq)
                try handle(machine.receive(event, now: instant))
            case .heartbeat(let seq):
                published = max(published, seq)
                try handle(machine.receive(Heartbeat(seq: seq, store: Self.store), now: instant))
            }
            // The service has made at least what either replica has sent.
            try answer(upTo: published)
            try handle(machine.tick(now: instant))
            try answer(upTo: published)
        }

        let last = events.last?.seq ?? start.seq
        #expect(replaced == 1, "only the first snapshot replaces the view")
        #expect(seen == Array((start.seq + 1)...last), "every seq applied once, in order")
        #expect(machine.replica?.seq == last)
        var expected = start
        for event in events { try expected.replay(event) }
        #expect(machine.replica == expected, "ends at the service's state")
        #expect(machine.phase == .live)
    }
}
