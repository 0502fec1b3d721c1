import CountriesClient
import CountriesCore
import Testing

// The subscription machine and store identity (docs/PROTOCOL.md, "Store identity"): a seq means
// something only within one store, so another store's word starts the replica over, whatever
// the seqs say. Also history paging (`more`) and the fallback when history never arrives.

private let t0 = ContinuousClock.now

private func at(_ milliseconds: Int) -> ContinuousClock.Instant {
    t0 + .milliseconds(milliseconds)
}

private let seed = SeedList.standard
private let storeA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
private let storeB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

private func seedRows() -> [IndexedCountry] {
    CountriesState(countries: seed).rows
}

private func visit(_ seq: UInt64, index: Int = 2, visited: Bool = true, store: String? = storeA) -> Event {
    Event(
        seq: seq, kind: .changed(IndexedCountry(index: index, name: seed[index].name, visited: visited)),
        store: store)
}

private func liveMachine(at seq: UInt64, store: String = storeA) -> SubscriptionMachine {
    var machine = SubscriptionMachine()
    _ = machine.start(now: t0)
    _ = machine.receive(Heartbeat(seq: seq, store: store), now: t0)
    _ = machine.receiveSnapshot(rows: seedRows(), seq: seq, store: store, now: t0)
    #expect(machine.phase == .live)
    #expect(machine.store == store)
    return machine
}

private func applied(_ output: SubscriptionMachine.Output) -> [UInt64] {
    output.notifications.compactMap {
        if case .applied(let event) = $0 { return event.seq }
        return nil
    }
}

@Test func aHeartbeatOfAnotherStoreAtTheSameSeqStartsOver() {
    // The case: the view slept at seq 5 of store A; the service came back on store B
    // and reached seq 5 too. Equal seqs, different stores.
    var machine = liveMachine(at: 5)
    let heartbeat = machine.receive(Heartbeat(seq: 5, store: storeB), now: at(1000))
    #expect(heartbeat.actions == [.requestSnapshot])
    #expect(machine.phase == .stale("the service runs on another store"))
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 5, store: storeB, now: at(1010))
    #expect(snapshot.notifications == [.replaced(seq: 5), .phaseChanged(.live)])
    #expect(machine.store == storeB)
    #expect(machine.receive(Heartbeat(seq: 5, store: storeB), now: at(2000)) == .init())
}

@Test func anEventOfAnotherStoreIsNotAppliedEvenWhenItsSeqFits() {
    var machine = liveMachine(at: 3)
    let event = machine.receive(visit(4, index: 3, store: storeB), now: at(100))
    #expect(applied(event).isEmpty)
    #expect(event.actions == [.requestSnapshot])
    #expect(machine.replica?.seq == 3)
    // The new store's snapshot is at 3: the buffered event 4 of that store follows it.
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 3, store: storeB, now: at(110))
    #expect(applied(snapshot) == [4])
    #expect(machine.phase == .live)
}

@Test func eventsOfAnotherStoreBufferedBeforeTheSnapshotAreDropped() {
    var machine = SubscriptionMachine()
    _ = machine.start(now: t0)
    _ = machine.receive(visit(2, store: storeA), now: at(1))
    _ = machine.receive(visit(3, index: 4, store: storeB), now: at(2))
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 2, store: storeB, now: at(3))
    #expect(applied(snapshot) == [3])
    #expect(machine.replica?.rows[2].visited == false, "store A's event 2 is not part of store B")
}

@Test func aSnapshotFromAnotherStoreThanPubNamedIsConfirmedBeforeLive() {
    var machine = SubscriptionMachine()
    _ = machine.start(now: t0)
    _ = machine.receive(Heartbeat(seq: 7, store: storeB), now: at(1))
    // A reply from a service still on store A (say, another replica) overtook nothing: check.
    let snapshot = machine.receiveSnapshot(rows: seedRows(), seq: 7, store: storeA, now: at(2))
    #expect(snapshot.actions == [.requestHistory(since: 7)])
    #expect(machine.phase != .live)
    // The service answers from store B: start over.
    let history = machine.receiveHistory([], store: storeB, now: at(3))
    #expect(history.actions == [.requestSnapshot])
    let fresh = machine.receiveSnapshot(rows: seedRows(), seq: 7, store: storeB, now: at(4))
    #expect(fresh.notifications.contains(.phaseChanged(.live)))
}

@Test func historyFromAnotherStoreIsIgnoredAndStartsOver() {
    var machine = liveMachine(at: 10)
    _ = machine.receive(Heartbeat(seq: 12, store: storeA), now: at(100))
    let history = machine.receiveHistory([visit(11), visit(12, index: 3)], store: storeB, now: at(110))
    #expect(applied(history).isEmpty)
    #expect(history.actions == [.requestSnapshot])
}

@Test func oldServicesWithoutStoreIdentityStillWork() {
    var machine = SubscriptionMachine()
    _ = machine.start(now: t0)
    _ = machine.receiveSnapshot(rows: seedRows(), seq: 1, now: at(1))
    #expect(machine.store == nil)
    let event = machine.receive(visit(2, store: nil), now: at(2))
    #expect(applied(event) == [2])
    #expect(machine.receive(Heartbeat(seq: 2), now: at(3)) == .init())
    #expect(machine.phase == .live)
}

@Test func historyIsReadPageByPage() {
    var machine = liveMachine(at: 10)
    let heartbeat = machine.receive(Heartbeat(seq: 30, store: storeA), now: at(100))
    #expect(heartbeat.actions == [.requestHistory(since: 10)])
    let first = machine.receiveHistory(
        (11...20).map { visit($0, visited: $0 % 2 == 1) }, store: storeA, more: true, now: at(110))
    #expect(applied(first) == Array(11...20))
    #expect(first.actions == [.requestHistory(since: 20)])
    #expect(machine.phase != .live)
    let second = machine.receiveHistory(
        (21...30).map { visit($0, visited: $0 % 2 == 1) }, store: storeA, more: false, now: at(120))
    #expect(applied(second) == Array(21...30))
    #expect(second.actions.isEmpty)
    #expect(machine.phase == .live)
}

@Test func aLastPageMarkedMoreAsksOnceMoreThenGoesLive() {
    // The service had more when it answered; the next page comes back empty.
    var machine = liveMachine(at: 10)
    _ = machine.receive(Heartbeat(seq: 12, store: storeA), now: at(100))
    let page = machine.receiveHistory(
        [visit(11), visit(12, index: 3)], store: storeA, more: true, now: at(110))
    #expect(page.actions == [.requestHistory(since: 12)])
    let empty = machine.receiveHistory([], store: storeA, more: false, now: at(120))
    #expect(empty.actions.isEmpty)
    #expect(machine.phase == .live)
}

@Test func historyThatNeverArrivesWhileTheServiceIsHeardFallsBackToAList() {
    // A reply over the client's size limit never arrives; asking for it forever would never end.
    var machine = liveMachine(at: 10)
    _ = machine.receive(Heartbeat(seq: 20, store: storeA), now: at(100))
    _ = machine.requestFailed(.requestHistory(since: 10), truncated: false, now: at(2100))
    _ = machine.receive(Heartbeat(seq: 20, store: storeA), now: at(2200))
    let retry = machine.tick(now: at(3100))
    #expect(retry.actions == [.requestHistory(since: 10)])
    let second = machine.requestFailed(.requestHistory(since: 10), truncated: false, now: at(5100))
    _ = machine.receive(Heartbeat(seq: 20, store: storeA), now: at(5200))
    let next = second.actions + machine.tick(now: at(7100)).actions
    #expect(next == [.requestSnapshot])
    #expect(machine.phase == .stale("history did not come through; taking a fresh list"))
}
