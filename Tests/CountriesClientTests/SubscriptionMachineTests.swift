import CountriesClient
import CountriesCore
import Testing

// A fake clock: every instant is an offset from one real instant, so timing rules are exact.
private let t0 = ContinuousClock.now

private func at(_ milliseconds: Int) -> ContinuousClock.Instant {
    t0 + .milliseconds(milliseconds)
}

private let seed = SeedList.standard

/// The standard rows as `list` sends them.
private func seedRows() -> [IndexedCountry] {
    CountriesState(countries: seed).rows
}

/// An event that marks row `index` of the standard list visited (fits any replica of it).
private func visit(_ seq: UInt64, index: Int = 2, visited: Bool = true) -> Event {
    Event(seq: seq, kind: .changed(IndexedCountry(index: index, name: seed[index].name, visited: visited)))
}

private typealias Machine = SubscriptionMachine

/// A machine that has taken its first snapshot at `seq` at t0 and is live.
private func liveMachine(at seq: UInt64, _ machine: Machine = Machine()) -> Machine {
    var machine = machine
    _ = machine.start(now: t0)
    _ = machine.receiveSnapshot(rows: seedRows(), seq: seq, now: t0)
    #expect(machine.phase == .live)
    return machine
}

private func applied(_ output: Machine.Output) -> [UInt64] {
    output.notifications.compactMap {
        if case .applied(let event) = $0 { return event.seq }
        return nil
    }
}

// MARK: - Start and snapshot

@Test func startAsksForASnapshotAndIsConnecting() {
    var machine = Machine()
    #expect(machine.nextDeadline() == nil)
    let output = machine.start(now: t0)
    #expect(output.actions == [.requestSnapshot])
    #expect(output.notifications.isEmpty)
    #expect(machine.phase == .connecting)
    #expect(machine.replica == nil)
    #expect(machine.nextDeadline() == at(3000))
    // Starting twice changes nothing and asks nothing.
    #expect(machine.start(now: at(10)) == Machine.Output())
}

@Test func firstSnapshotReplacesAndGoesLive() {
    var machine = Machine()
    _ = machine.start(now: t0)
    let output = machine.receiveSnapshot(rows: seedRows(), seq: 10, now: at(5))
    #expect(output.actions.isEmpty)
    #expect(output.notifications == [.replaced(seq: 10), .phaseChanged(.live)])
    #expect(machine.replica == CountriesState(countries: seed, seq: 10))
}

@Test func eventsBeforeTheSnapshotBelowAtAndAboveItsSeq() {
    var machine = Machine()
    _ = machine.start(now: t0)
    for seq: UInt64 in [9, 10, 11, 12, 12, 13] {
        let output = machine.receive(visit(seq, index: Int(seq % 8)), now: at(1))
        #expect(output == Machine.Output(), "buffered silently before the snapshot")
    }
    let output = machine.receiveSnapshot(rows: seedRows(), seq: 10, now: at(2))
    #expect(output.actions.isEmpty)
    #expect(
        output.notifications == [
            .replaced(seq: 10), .applied(visit(11, index: 3)), .applied(visit(12, index: 4)),
            .applied(visit(13, index: 5)), .phaseChanged(.live),
        ])
    #expect(machine.replica?.seq == 13)
    #expect(machine.replica?.countries[3].visited == true)
}

@Test func eventsBeforeTheSnapshotWithAGapAskForHistory() {
    var machine = Machine()
    _ = machine.start(now: t0)
    _ = machine.receive(visit(11), now: at(1))
    _ = machine.receive(visit(14), now: at(1))
    _ = machine.receive(visit(15), now: at(1))
    let output = machine.receiveSnapshot(rows: seedRows(), seq: 10, now: at(2))
    #expect(output.actions == [.requestHistory(since: 11)])
    #expect(
        output.notifications == [
            .replaced(seq: 10), .applied(visit(11)), .phaseChanged(.stale("missed events 12-13")),
        ])
    let history = machine.receiveHistory([visit(12), visit(13), visit(14)], now: at(3))
    #expect(applied(history) == [12, 13, 14, 15])
    #expect(history.notifications.last == .phaseChanged(.live))
    #expect(machine.replica?.seq == 15)
}

/// The same run with `keepsStates` off: the same notifications and replica, and no states in
/// any output (a state held there made each next replay of a page copy the whole list).
@Test func withoutKeptStatesTheOutputsCarryNoneAndTheReplicaIsTheSame() {
    func run(keepsStates: Bool) -> (outputs: [Machine.Output], replica: CountriesState?) {
        var machine = Machine()
        machine.keepsStates = keepsStates
        var outputs = [machine.start(now: t0)]
        outputs.append(machine.receive(visit(11), now: at(1)))
        outputs.append(machine.receive(visit(14, index: 3), now: at(1)))
        outputs.append(machine.receiveSnapshot(rows: seedRows(), seq: 10, now: at(2)))
        outputs.append(
            machine.receiveHistory(
                [visit(12, index: 4), visit(13, index: 5), visit(14, index: 3)], now: at(3)))
        outputs.append(machine.receive(visit(15, index: 6), now: at(4)))
        return (outputs, machine.replica)
    }
    let kept = run(keepsStates: true)
    let dropped = run(keepsStates: false)
    #expect(kept.outputs.map(\.notifications) == dropped.outputs.map(\.notifications))
    #expect(kept.outputs.map(\.actions) == dropped.outputs.map(\.actions))
    #expect(kept.replica == dropped.replica && dropped.replica?.seq == 15)
    #expect(kept.outputs.reduce(0) { $0 + $1.states.count } == 6)  // the snapshot and 11 to 15
    #expect(dropped.outputs.allSatisfy { $0.states.isEmpty })
}

@Test func aSnapshotSupersedesEarlierHeartbeatsButNotLaterOnes() {
    var machine = Machine()
    _ = machine.start(now: t0)
    _ = machine.receive(Heartbeat(seq: 20), now: at(1))
    // A reply is the service's word at reply time, which may be after that heartbeat was sent:
    // trusting the older heartbeat over it could chase a seq of a store that is gone.
    let output = machine.receiveSnapshot(rows: seedRows(), seq: 18, now: at(2))
    #expect(output.actions.isEmpty)
    #expect(machine.phase == .live)
    // The next heartbeat still says 20: now it is a gap.
    let heartbeat = machine.receive(Heartbeat(seq: 20), now: at(1001))
    #expect(heartbeat.actions == [.requestHistory(since: 18)])
    #expect(machine.phase == .stale("missed events 19-20"))
}

// MARK: - Live events

@Test func nextEventIsAppliedAndDuplicatesAreDropped() {
    var machine = liveMachine(at: 10)
    let first = machine.receive(visit(11), now: at(10))
    #expect(first == Machine.Output(notifications: [.applied(visit(11))]))
    #expect(machine.receive(visit(11), now: at(11)) == Machine.Output())
    #expect(machine.receive(visit(7), now: at(12)) == Machine.Output())
    #expect(machine.replica?.seq == 11)
    #expect(machine.phase == .live)
}

@Test func anEventGapGoesStaleBuffersAndHistoryFillsIt() {
    var machine = liveMachine(at: 12)
    let gap = machine.receive(visit(16), now: at(10))
    #expect(gap.actions == [.requestHistory(since: 12)])
    #expect(gap.notifications == [.phaseChanged(.stale("missed events 13-15"))])
    // Later events are buffered; no second request while one is outstanding.
    let more = machine.receive(visit(17), now: at(11))
    #expect(more == Machine.Output())
    #expect(machine.receive(visit(19), now: at(12)) == Machine.Output())
    #expect(machine.receive(visit(18), now: at(13)) == Machine.Output())
    #expect(machine.replica?.seq == 12)

    let history = machine.receiveHistory([visit(13), visit(14), visit(15), visit(16)], now: at(20))
    #expect(applied(history) == [13, 14, 15, 16, 17, 18, 19])
    #expect(history.notifications.last == .phaseChanged(.live))
    #expect(history.actions.isEmpty)
    #expect(machine.replica?.seq == 19)
}

@Test func aSingleMissedEventIsNamedAlone() {
    var machine = liveMachine(at: 10)
    let output = machine.receive(visit(12), now: at(1))
    #expect(output.notifications == [.phaseChanged(.stale("missed event 11"))])
}

@Test func historyThatStopsShortOfTheBufferAsksAgain() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(visit(15), now: at(1))
    // History reached 12 only (the service answered before 13 existed, say).
    let output = machine.receiveHistory([visit(11), visit(12)], now: at(2))
    #expect(applied(output) == [11, 12])
    #expect(output.actions == [.requestHistory(since: 12)])
    #expect(machine.phase == .stale("missed events 11-14"))
}

@Test func historyWithoutProgressFallsBackToASnapshot() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(visit(15), now: at(1))
    let output = machine.receiveHistory([], now: at(2))
    #expect(output.actions == [.requestSnapshot])
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 15, now: at(3))
    #expect(snapshot.notifications == [.replaced(seq: 15), .phaseChanged(.live)])
}

@Test func historyWithAHoleFallsBackToASnapshot() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(visit(15), now: at(1))
    let output = machine.receiveHistory([visit(11), visit(13)], now: at(2))
    #expect(applied(output) == [11])
    #expect(output.actions == [.requestSnapshot])
}

// MARK: - Heartbeats

@Test func aHeartbeatAheadOfTheReplicaIsAGap() {
    var machine = liveMachine(at: 10)
    #expect(machine.receive(Heartbeat(seq: 10), now: at(1000)) == Machine.Output())
    let output = machine.receive(Heartbeat(seq: 13), now: at(2000))
    #expect(output.actions == [.requestHistory(since: 10)])
    #expect(output.notifications == [.phaseChanged(.stale("missed events 11-13"))])
    let history = machine.receiveHistory([visit(11), visit(12), visit(13)], now: at(2010))
    #expect(applied(history) == [11, 12, 13])
    #expect(history.notifications.last == .phaseChanged(.live))
}

/// The largest seq a store keeps (decoding refuses larger ones, which made the gap's count trap
/// and killed every subscriber): a gap up to it is named without counting its seqs.
@Test func aGapToTheLargestSeqIsNamedWithoutCountingIt() {
    let largest = UInt64(Int64.max)
    var machine = liveMachine(at: 10)
    let beat = machine.receive(Heartbeat(seq: largest), now: at(1000))
    #expect(beat.notifications == [.phaseChanged(.stale("missed events 11-\(largest)"))])
    var other = liveMachine(at: 10)
    let event = other.receive(visit(largest), now: at(1000))
    #expect(event.notifications == [.phaseChanged(.stale("missed events 11-\(largest - 1)"))])
    #expect(event.actions == [.requestHistory(since: 10)])
}

@Test func aHeartbeatCoveredByBufferedEventsAsksNothingMore() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(visit(12), now: at(1))
    let output = machine.receive(Heartbeat(seq: 12), now: at(2))
    #expect(output == Machine.Output(), "already stale and already asking")
}

@Test func silenceMakesStaleAtTheWindowAndProbes() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(Heartbeat(seq: 10), now: at(1000))
    #expect(machine.nextDeadline() == at(4000))
    #expect(machine.tick(now: at(3999)) == Machine.Output())
    let stale = machine.tick(now: at(4000))
    #expect(stale.notifications == [.phaseChanged(.stale("no heartbeat for 3 s"))])
    #expect(stale.actions == [.requestHistory(since: 10)])
    #expect(machine.nextDeadline() == nil, "waiting on the request")

    // The service answers but PUB stays quiet: probes slow down, 1 s, 2 s, 4 s, then 5 s.
    var now = 4000
    for delay in [1000, 2000, 4000, 5000, 5000] {
        let answer = machine.receiveHistory([], now: at(now))
        #expect(answer.actions.isEmpty)
        #expect(machine.phase == .stale("no heartbeat for 3 s"))
        #expect(machine.nextDeadline() == at(now + delay))
        #expect(machine.tick(now: at(now + delay - 1)).actions.isEmpty)
        now += delay
        #expect(machine.tick(now: at(now)).actions == [.requestHistory(since: 10)])
    }
}

@Test func recoveryAfterSilenceCatchesUpBeforeGoingLive() {
    var machine = liveMachine(at: 10)
    _ = machine.tick(now: at(3000))
    #expect(machine.phase == .stale("no heartbeat for 3 s"))
    // The probe times out: the service is gone.
    _ = machine.requestFailed(.requestHistory(since: 10), truncated: false, now: at(4000))
    #expect(machine.nextDeadline() == at(5000))
    // It comes back: the heartbeat (same seq) triggers a catch-up at once, not after the backoff.
    let heartbeat = machine.receive(Heartbeat(seq: 10), now: at(4500))
    #expect(heartbeat.actions == [.requestHistory(since: 10)])
    #expect(machine.phase == .stale("no heartbeat for 3 s"), "live only when caught up")
    let caughtUp = machine.receiveHistory([], now: at(4510))
    #expect(caughtUp.notifications == [.phaseChanged(.live)])
    #expect(machine.nextDeadline() == at(7500))
}

@Test func recoveryAfterSilenceWithMissedEvents() {
    var machine = liveMachine(at: 10)
    _ = machine.tick(now: at(3000))
    _ = machine.requestFailed(.requestHistory(since: 10), truncated: false, now: at(3100))
    let event = machine.receive(visit(14), now: at(3500))
    #expect(event.actions == [.requestHistory(since: 10)])
    #expect(event.notifications == [.phaseChanged(.stale("missed events 11-13"))])
    let history = machine.receiveHistory([visit(11), visit(12), visit(13), visit(14)], now: at(3600))
    #expect(applied(history) == [11, 12, 13, 14])
    #expect(history.notifications.last == .phaseChanged(.live))
}

@Test func silenceBeforeTheFirstSnapshotStaysConnectingAndRetries() {
    var machine = Machine()
    _ = machine.start(now: t0)
    _ = machine.requestFailed(.requestSnapshot, truncated: false, now: at(1000))
    #expect(machine.nextDeadline() == at(2000))
    let retry = machine.tick(now: at(2000))
    #expect(retry.actions == [.requestSnapshot])
    #expect(machine.nextDeadline() == at(3000))
    let silence = machine.tick(now: at(3000))
    #expect(silence == Machine.Output(), "still connecting, and the request is outstanding")
    #expect(machine.phase == .connecting)
    // A snapshot while PUB is silent is data, but not live data.
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 3, now: at(3500))
    #expect(snapshot.notifications == [.replaced(seq: 3), .phaseChanged(.stale("no heartbeat for 3 s"))])
    #expect(snapshot.actions.isEmpty, "the next probe waits out the backoff")
    // The first heartbeat ends the silence and asks to confirm at once.
    let heartbeat = machine.receive(Heartbeat(seq: 3), now: at(3600))
    #expect(heartbeat.actions == [.requestHistory(since: 3)])
    let confirmed = machine.receiveHistory([], now: at(3610))
    #expect(confirmed.notifications == [.phaseChanged(.live)])
}

@Test func fractionalSilenceWindowsAreDescribed() {
    var machine = liveMachine(
        at: 1, Machine(heartbeatInterval: .milliseconds(500), missedHeartbeatsBeforeStale: 3))
    #expect(machine.nextDeadline() == at(1500))
    let output = machine.tick(now: at(1500))
    #expect(output.notifications == [.phaseChanged(.stale("no heartbeat for 1.5 s"))])
}

// MARK: - Restarts

@Test func aRestartWithSeqContinuingCatchesUpThroughATruncatedHistory() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(Heartbeat(seq: 10), now: at(1000))
    _ = machine.tick(now: at(4000))
    _ = machine.requestFailed(.requestHistory(since: 10), truncated: false, now: at(5000))
    // Back on the same store, which moved on while we could not hear it; its history is gone.
    let heartbeat = machine.receive(Heartbeat(seq: 25), now: at(5500))
    #expect(heartbeat.actions == [.requestHistory(since: 10)])
    #expect(machine.phase == .stale("missed events 11-25"))
    let truncated = machine.requestFailed(.requestHistory(since: 10), truncated: true, now: at(5510))
    #expect(truncated.actions == [.requestSnapshot])
    _ = machine.receive(visit(26), now: at(5515))
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 25, now: at(5520))
    #expect(snapshot.notifications == [.replaced(seq: 25), .applied(visit(26)), .phaseChanged(.live)])
}

@Test func aRestartOnALowerStoreResyncs() {
    var machine = liveMachine(at: 20)
    _ = machine.receive(Heartbeat(seq: 20), now: at(1000))
    let restart = machine.receive(Heartbeat(seq: 5), now: at(2000))
    #expect(restart.actions == [.requestSnapshot])
    #expect(restart.notifications == [.phaseChanged(.stale("service restarted"))])
    // The new store's events are below the old replica's seq yet are not duplicates.
    #expect(machine.receive(visit(6, index: 0, visited: false), now: at(2001)) == Machine.Output())
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 5, now: at(2002))
    #expect(
        snapshot.notifications == [
            .replaced(seq: 5), .applied(visit(6, index: 0, visited: false)), .phaseChanged(.live),
        ])
    #expect(machine.replica?.seq == 6)
    #expect(machine.receive(Heartbeat(seq: 6), now: at(2500)) == Machine.Output())
}

@Test func aRestartDuringAHistoryRequestIgnoresTheHistory() {
    var machine = liveMachine(at: 20)
    _ = machine.receive(Heartbeat(seq: 22), now: at(1000))
    let restart = machine.receive(Heartbeat(seq: 4), now: at(2000))
    #expect(restart.actions.isEmpty, "the history request is still outstanding")
    let history = machine.receiveHistory([], now: at(2010))
    #expect(history.actions == [.requestSnapshot])
    #expect(applied(history).isEmpty)
}

@Test func aHeartbeatBehindAFreshSnapshotIsNotARestart() {
    // The list reply overtook the PUB channel: heartbeat 18 was queued before events 19 and 20.
    var machine = Machine()
    _ = machine.start(now: t0)
    _ = machine.receiveSnapshot(rows: seedRows(), seq: 20, now: at(10))
    #expect(machine.receive(Heartbeat(seq: 18), now: at(11)) == Machine.Output())
    #expect(machine.receive(visit(19), now: at(12)) == Machine.Output())
    #expect(machine.receive(visit(20), now: at(13)) == Machine.Output())
    #expect(machine.receive(Heartbeat(seq: 20), now: at(1000)) == Machine.Output())
    #expect(machine.phase == .live)
}

@Test func aHeartbeatThatStaysBehindIsARestart() {
    var machine = liveMachine(at: 20)
    #expect(machine.receive(Heartbeat(seq: 5), now: at(1000)) == Machine.Output())
    #expect(machine.receive(Heartbeat(seq: 5), now: at(2000)) == Machine.Output())
    #expect(machine.receive(Heartbeat(seq: 5), now: at(3000)) == Machine.Output())
    let restart = machine.receive(Heartbeat(seq: 5), now: at(4000))
    #expect(restart.actions == [.requestSnapshot])
    #expect(machine.phase == .stale("service restarted"))
}

// MARK: - Failures

@Test func aFailedRequestIsRetriedWithBackoff() {
    // A long watchdog window, so the retry is the only deadline.
    var machine = Machine(missedHeartbeatsBeforeStale: 60)
    _ = machine.start(now: t0)
    var now = 100
    for delay in [1000, 2000, 4000, 5000, 5000] {
        let failed = machine.requestFailed(.requestSnapshot, truncated: false, now: at(now))
        #expect(failed.actions.isEmpty)
        #expect(machine.nextDeadline() == at(now + delay))
        #expect(machine.tick(now: at(now + delay - 1)).actions.isEmpty)
        now += delay
        #expect(machine.tick(now: at(now)).actions == [.requestSnapshot])
    }
    // A success resets the backoff.
    _ = machine.receiveSnapshot(rows: seedRows(), seq: 1, now: at(now))
    #expect(machine.receive(visit(3), now: at(now)).actions == [.requestHistory(since: 1)])
    _ = machine.requestFailed(.requestHistory(since: 1), truncated: false, now: at(now))
    #expect(machine.nextDeadline() == at(now + 1000))
}

@Test func aFailureReportForAnotherRequestDoesNotFreeTheSlot() {
    var machine = Machine()
    _ = machine.start(now: t0)
    _ = machine.requestFailed(.requestHistory(since: 3), truncated: true, now: at(1))
    // The snapshot request is still outstanding: nothing new is sent.
    #expect(machine.tick(now: at(2)).actions.isEmpty)
}

@Test func aTruncatedHistoryTakesASnapshotAtOnce() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(visit(13), now: at(1))
    let truncated = machine.requestFailed(.requestHistory(since: 10), truncated: true, now: at(2))
    #expect(truncated.actions == [.requestSnapshot])
    _ = machine.receive(visit(14), now: at(3))
    #expect(machine.replica?.seq == 10)
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 12, now: at(4))
    #expect(
        snapshot.notifications == [
            .replaced(seq: 12), .applied(visit(13)), .applied(visit(14)), .phaseChanged(.live),
        ])
}

// MARK: - Overflow and mismatch

@Test func bufferOverflowWhileWaitingForHistoryResyncs() {
    var machine = liveMachine(at: 10, Machine(bufferLimit: 5))
    _ = machine.receive(visit(12), now: at(1))
    for seq: UInt64 in 13...17 { _ = machine.receive(visit(seq), now: at(2)) }
    #expect(machine.phase == .stale("fell too far behind"))
    // The history that was asked for is no longer wanted.
    let history = machine.receiveHistory([visit(11)], now: at(3))
    #expect(applied(history).isEmpty)
    #expect(history.actions == [.requestSnapshot])
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 16, now: at(4))
    #expect(snapshot.notifications == [.replaced(seq: 16), .applied(visit(17)), .phaseChanged(.live)])
}

/// Resets of a long list past a hole fill the buffer's bytes long before its count: the machine
/// starts again from a snapshot instead of holding them all.
@Test func bufferBytesOverflowWhileWaitingForHistoryResyncs() {
    let rows = (0..<2_000).map { IndexedCountry(index: $0, name: "Country \($0)", visited: false) }
    let size = Event(seq: 1, kind: .reset(rows)).estimatedBytes
    var machine = liveMachine(at: 10, Machine(bufferBytes: 4 * size))
    _ = machine.receive(visit(12), now: at(1))
    for seq: UInt64 in 13...15 { _ = machine.receive(Event(seq: seq, kind: .reset(rows)), now: at(2)) }
    #expect(machine.phase != .stale("fell too far behind"), "three resets and a toggle fit")
    _ = machine.receive(Event(seq: 16, kind: .reset(rows)), now: at(3))
    #expect(machine.phase == .stale("fell too far behind"))
    let history = machine.receiveHistory([visit(11)], now: at(4))
    #expect(history.actions == [.requestSnapshot])
}

@Test func bufferOverflowBeforeTheFirstSnapshotStillConverges() {
    var machine = Machine(bufferLimit: 3)
    _ = machine.start(now: t0)
    for seq: UInt64 in 1...5 { _ = machine.receive(visit(seq), now: at(1)) }
    // The snapshot was asked for before the overflow, so it may not cover what was dropped.
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 2, now: at(2))
    #expect(snapshot.actions == [.requestHistory(since: 2)])
    let history = machine.receiveHistory([visit(3), visit(4), visit(5)], now: at(3))
    #expect(applied(history) == [3, 4, 5])
    #expect(machine.phase == .live)
}

@Test func aMismatchResyncsBySnapshot() {
    var machine = liveMachine(at: 10)
    let wrong = Event(seq: 11, kind: .changed(IndexedCountry(index: 0, name: "Atlantis", visited: true)))
    let output = machine.receive(wrong, now: at(1))
    #expect(output.actions == [.requestSnapshot])
    #expect(output.notifications == [.phaseChanged(.stale("event 11 did not fit the local copy"))])
    #expect(machine.replica?.seq == 10)
    // Later events wait for the snapshot instead of being replayed on a wrong replica.
    #expect(machine.receive(visit(12), now: at(2)) == Machine.Output())
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 11, now: at(3))
    #expect(snapshot.notifications == [.replaced(seq: 11), .applied(visit(12)), .phaseChanged(.live)])
}

@Test func aMismatchInHistoryResyncs() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(visit(13), now: at(1))
    let bad = Event(seq: 12, kind: .removed(IndexedCountry(index: 40, name: "Nowhere", visited: false)))
    let output = machine.receiveHistory([visit(11), bad], now: at(2))
    #expect(applied(output) == [11])
    #expect(output.actions == [.requestSnapshot])
}

// MARK: - Events whose names break the service's rules (issue 22)

/// Issue 22's hostile name: a title change, a screen clear, the 8-bit CSI, a bidi override, DEL.
private let hostileName = "Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}"

/// A `country.added` the service could never have published: it appends the hostile name.
private func forged(_ seq: UInt64) -> Event {
    Event(seq: seq, kind: .added(IndexedCountry(index: seed.count, name: hostileName, visited: false)))
}

private func rejections(_ output: Machine.Output) -> [(seq: UInt64, reason: String)] {
    output.notifications.compactMap {
        if case .rejected(let seq, let reason) = $0 { return (seq, reason) }
        return nil
    }
}

@Test func anEventWhoseNameBreaksTheRulesIsDroppedReportedOnceAndCaughtUpAsAGap() {
    var machine = liveMachine(at: 10)
    let output = machine.receive(forged(11), now: at(1))
    #expect(applied(output).isEmpty)
    #expect(machine.replica?.seq == 10)
    #expect(machine.replica?.count == seed.count, "the forged row is not in the replica")
    #expect(output.actions == [.requestHistory(since: 10)])
    let reported = rejections(output)
    #expect(reported.map(\.seq) == [11])
    let reason = reported.first?.reason ?? ""
    #expect(reason.contains(#""Evil\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m\u{202E}dlroW\u{7F}""#), "\(reason)")
    #expect(!reason.unicodeScalars.contains(where: VisibleText.isEscaped))
    #expect(output.notifications.last == .phaseChanged(.stale("dropped event 11: its name breaks the rules")))
    // The same forgery again (a replay, another replica) is dropped without a word.
    #expect(machine.receive(forged(11), now: at(2)) == Machine.Output())
    // The service's history has its own event 11: applied, and live again.
    let history = machine.receiveHistory([visit(11)], now: at(3))
    #expect(applied(history) == [11])
    #expect(history.notifications.last == .phaseChanged(.live))
}

@Test func aForgeryAtOrBelowTheReplicaIsDroppedAndTheServiceAskedAnyway() {
    var machine = liveMachine(at: 10)
    let forgery = Event(seq: 9, kind: .changed(IndexedCountry(index: 2, name: "Fr\u{9B}ance", visited: true)))
    let output = machine.receive(forgery, now: at(1))
    #expect(rejections(output).map(\.seq) == [9])
    #expect(output.actions == [.requestHistory(since: 10)])
    #expect(machine.phase == .stale("dropped event 9: its name breaks the rules"))
    let history = machine.receiveHistory([], now: at(2))
    #expect(history.notifications == [.phaseChanged(.live)])
    #expect(machine.replica == CountriesState(rows: seedRows(), seq: 10))
}

@Test func aResetWithOneNameThatBreaksTheRulesIsDroppedWhole() {
    var machine = liveMachine(at: 10)
    var rows = seedRows()
    rows[3].name = "\u{202E}ecnarF"
    let output = machine.receive(Event(seq: 11, kind: .reset(rows)), now: at(1))
    #expect(applied(output).isEmpty)
    #expect(rejections(output).map(\.seq) == [11])
    #expect(output.actions == [.requestHistory(since: 10)])
}

@Test func aForgeryBeforeTheFirstSnapshotIsNotKept() {
    var machine = Machine()
    _ = machine.start(now: t0)
    #expect(rejections(machine.receive(forged(11), now: at(1))).map(\.seq) == [11])
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 10, now: at(2))
    #expect(snapshot.notifications == [.replaced(seq: 10), .phaseChanged(.live)])
    #expect(machine.replica?.count == seed.count)
}

/// History is held to the same rules: the service's own history with such a name cannot be
/// replayed, so only a fresh list is left.
@Test func historyWithANameThatBreaksTheRulesResyncsBySnapshot() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(visit(13), now: at(1))
    let output = machine.receiveHistory([visit(11), forged(12)], now: at(2))
    #expect(applied(output) == [11])
    #expect(rejections(output).map(\.seq) == [12])
    #expect(output.actions == [.requestSnapshot])
    #expect(machine.replica?.count == seed.count)
}

// MARK: - Events the service never confirms

/// The audit's case: with two `--events` sources (so a lower heartbeat is a lagging replica,
/// not a restart) one forged event far ahead made history, then list, then history again go
/// round 4,000 times a second, stale for ever. Now the service is asked again after a backoff,
/// and once its lists stayed short of the event for a silence window, the event is dropped
/// as a protocol violation and the view is live on what the service has.
@Test func anEventTheServiceNeverConfirmsIsDroppedAfterASilenceWindowWithoutAFlood() {
    var machine = liveMachine(at: 5, Machine(sources: 2))
    let forged = machine.receive(visit(1000), now: at(100))
    #expect(forged.actions == [.requestHistory(since: 5)])
    var requests = 1
    var now = 100
    var outputs: [Machine.Output] = []
    var pending: Machine.Action? = .requestHistory(since: 5)
    // The service answers at once, always at seq 5; heartbeats at 5 from both sources.
    while now < 20_000, machine.phase != .live {
        now += 10
        var output = Machine.Output()
        switch pending {
        case .requestHistory?: output = machine.receiveHistory([], now: at(now))
        case .requestSnapshot?: output = machine.receiveSnapshot(rows: seedRows(), seq: 5, now: at(now))
        case nil:
            if now % 1000 == 0 { _ = machine.receive(Heartbeat(seq: 5), now: at(now)) }
            if let deadline = machine.nextDeadline(), deadline <= at(now) {
                output = machine.tick(now: at(now))
            }
        }
        pending = output.actions.last
        requests += output.actions.count
        outputs.append(output)
    }
    #expect(machine.phase == .live)
    #expect(now <= 5_000, "live again within a silence window and a backoff: \(now) ms")
    #expect(requests <= 12, "asked again after a backoff, not at once: \(requests) requests")
    let rejected = outputs.flatMap(\.notifications).filter {
        if case .rejected(seq: 1000, _) = $0 { return true }
        return false
    }
    #expect(rejected.count == 1)
    #expect(machine.replica?.seq == 5)
    // A real event after it is taken as usual.
    #expect(applied(machine.receive(visit(6), now: at(now + 10))) == [6])
}

/// A heartbeat ahead that neither history nor the list bears out (forged, repeated every 10 ms,
/// with two sources so that it is not a restart): the view goes stale and back, but the
/// service is asked at most about twice a heartbeat interval, not twice per forged heartbeat.
@Test func forgedHeartbeatsAheadDoNotMakeAFloodOfRequests() {
    var machine = liveMachine(at: 5, Machine(sources: 2))
    var requests = 0
    var pending: Machine.Action?
    for now in stride(from: 10, through: 5_000, by: 10) {
        var output = machine.receive(Heartbeat(seq: 99), now: at(now))
        if pending == nil, let action = output.actions.last { pending = action }
        requests += output.actions.count
        switch pending {
        case .requestHistory?: output = machine.receiveHistory([], now: at(now + 1))
        case .requestSnapshot?: output = machine.receiveSnapshot(rows: seedRows(), seq: 5, now: at(now + 1))
        case nil: output = machine.tick(now: at(now + 1))
        }
        if pending != nil { pending = nil }
        requests += output.actions.count
        pending = output.actions.last
    }
    #expect(requests <= 12, "\(requests) requests in 5 s of forged heartbeats")
    #expect(machine.replica?.seq == 5)
}

/// A history page that says `more` and holds no event (a page always holds one) is no progress:
/// an audit's peer answered so while its heartbeats stayed one seq ahead, and the machine asked
/// again at once, about 3,500 times a second. It is taken as history that lacks what PUB
/// announced: a list, then a backoff.
@Test func anEmptyPageThatSaysMoreIsNoProgress() {
    var machine = liveMachine(at: 5)
    var requests = 0
    var pending: Machine.Action?
    for now in stride(from: 1, through: 5_000, by: 1) {
        var output: Machine.Output
        if now % 1_000 == 0 {
            output = machine.receive(Heartbeat(seq: 6), now: at(now))
        } else if let action = pending {
            pending = nil
            switch action {
            case .requestHistory: output = machine.receiveHistory([], more: true, now: at(now))
            case .requestSnapshot: output = machine.receiveSnapshot(rows: seedRows(), seq: 5, now: at(now))
            }
        } else if let deadline = machine.nextDeadline(), deadline <= at(now) {
            output = machine.tick(now: at(now))
        } else {
            continue
        }
        requests += output.actions.count
        if let action = output.actions.last { pending = action }
    }
    #expect(requests <= 20, "\(requests) requests in 5 s of empty pages")
    #expect(machine.replica?.seq == 5)
}

/// Heartbeats naming a new store every 10 ms (a publisher behind a relay) while the service's
/// list keeps naming its own: an audit's subscriber asked for a list and a history for each,
/// 1,897 of each in 21 s, and a list is up to 16 MB of the real service's. Once the list does
/// not bear the change out, the next ask waits for a backoff.
@Test func heartbeatsNamingANewStoreEachTimeDoNotMakeAFloodOfLists() {
    var machine = Machine()
    var requests = 0
    var lists = 0
    var pending: Machine.Action?
    pending = machine.start(now: at(0)).actions.last
    requests += 1
    for now in stride(from: 10, through: 5_000, by: 10) {
        var output = machine.receive(Heartbeat(seq: 5, store: "forged-\(now)"), now: at(now))
        if pending == nil, let action = output.actions.last { pending = action }
        requests += output.actions.count
        switch pending {
        case .requestHistory?: output = machine.receiveHistory([], store: "real", now: at(now + 1))
        case .requestSnapshot?:
            lists += 1
            output = machine.receiveSnapshot(rows: seedRows(), seq: 5, store: "real", now: at(now + 1))
        case nil: output = machine.tick(now: at(now + 1))
        }
        pending = nil
        requests += output.actions.count
        pending = output.actions.last
    }
    #expect(requests <= 24, "\(requests) requests (\(lists) lists) in 5 s of forged stores")
    #expect(machine.store == "real")
}
