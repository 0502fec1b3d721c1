import CountriesClient
import CountriesCore
import Testing

// EventFeed: every event once and in order from a position, filled from history page by page,
// or one restart with the whole state when history cannot tell what happened.

private let seed = SeedList.standard
private let storeA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
private let storeB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

private func visit(_ seq: UInt64, store: String? = storeA) -> Event {
    let index = Int(seq % UInt64(seed.count))
    return Event(
        seq: seq, kind: .changed(IndexedCountry(index: index, name: seed[index].name, visited: seq % 2 == 1)),
        store: store)
}

private func state(at seq: UInt64) -> CountriesState {
    CountriesState(countries: seed, seq: seq)
}

private struct NoHistory: Error {}

/// History from `store` holding events `kept`, `pageSize` at a time.
private func history(
    _ kept: ClosedRange<UInt64>, store: String = storeA, pageSize: Int = 1_000, asked: Box? = nil
) -> (UInt64) -> EventFeed.HistoryPage? {
    { since in
        asked?.values.append(since)
        guard since + 1 >= kept.lowerBound else { return nil }
        let events = ((since + 1)...max(since + 1, kept.upperBound)).filter { $0 <= kept.upperBound }.map {
            visit($0, store: store)
        }
        return (Array(events.prefix(pageSize)), store, events.count > pageSize)
    }
}

private final class Box {
    var values: [UInt64] = []
}

private func seqs(_ deliveries: [EventFeed.Delivery]) -> [UInt64] {
    deliveries.compactMap {
        if case .event(let event) = $0 { return event.seq }
        return nil
    }
}

@Test func fromNowTheSnapshotIsSilentAndEventsFollow() {
    var feed = EventFeed(start: .now)
    let first = feed.deliveries(
        for: [.replaced(seq: 4)], replica: state(at: 4), store: storeA, history: history(1...4))
    #expect(first.isEmpty)
    let next = feed.deliveries(
        for: [.applied(visit(5))], replica: state(at: 5), store: storeA, history: history(1...5))
    #expect(seqs(next) == [5])
    #expect(feed.position == .init(store: storeA, seq: 5))
}

@Test func afterAPositionTheMissedEventsComeFromHistoryPageByPage() {
    let asked = Box()
    var feed = EventFeed(start: .after(.init(store: storeA, seq: 2)))
    let out = feed.deliveries(
        for: [.replaced(seq: 9), .applied(visit(10))], replica: state(at: 10), store: storeA,
        history: history(1...9, pageSize: 3, asked: asked))
    #expect(seqs(out) == Array(3...10))
    #expect(asked.values == [2, 5, 8])
    #expect(feed.position?.seq == 10)
}

@Test func historyThatNoLongerReachesBackIsOneRestart() {
    var feed = EventFeed(start: .after(.init(store: storeA, seq: 2)))
    let replica = state(at: 12)
    let out = feed.deliveries(
        for: [.replaced(seq: 11), .applied(visit(12))], replica: replica, store: storeA,
        history: history(6...11))
    #expect(out == [.restart(replica, .historyGone(after: 2, upTo: 11))])
    #expect(feed.position == .init(store: storeA, seq: 12))
    // Events after the restart go on as usual; the one inside it is not delivered twice.
    let next = feed.deliveries(
        for: [.applied(visit(13))], replica: state(at: 13), store: storeA, history: history(6...13))
    #expect(seqs(next) == [13])
}

@Test func anotherStoreIsOneRestartWhateverTheSeqs() {
    var feed = EventFeed(start: .after(.init(store: storeA, seq: 5)))
    let replica = state(at: 5)
    let out = feed.deliveries(
        for: [.replaced(seq: 5)], replica: replica, store: storeB, history: history(1...5, store: storeB))
    #expect(out == [.restart(replica, .storeChanged(from: storeA, to: storeB))])
    #expect(feed.position == .init(store: storeB, seq: 5))
}

@Test func historyAnsweredByAnotherStoreIsARestart() {
    var feed = EventFeed(start: .after(.init(store: storeA, seq: 1)))
    let replica = state(at: 3)
    let out = feed.deliveries(
        for: [.replaced(seq: 3)], replica: replica, store: storeA, history: history(1...3, store: storeB))
    #expect(out == [.restart(replica, .historyGone(after: 1, upTo: 3))])
}

@Test func aResyncLaterInTheRunFillsTheGapFromHistory() {
    var feed = EventFeed(start: .now)
    _ = feed.deliveries(
        for: [.replaced(seq: 1)], replica: state(at: 1), store: storeA, history: history(1...1))
    // The subscription fell behind and took a fresh list at 6; history still has 2 to 6.
    let out = feed.deliveries(
        for: [.replaced(seq: 6)], replica: state(at: 6), store: storeA, history: history(1...6))
    #expect(seqs(out) == [2, 3, 4, 5, 6])
}

@Test func initialStartHandsTheFirstSnapshotOver() {
    var feed = EventFeed(start: .snapshot)
    let out = feed.deliveries(
        for: [.replaced(seq: 3)], replica: state(at: 3), store: storeA, history: history(1...3))
    #expect(out == [.restart(state(at: 3), .initial)])
}

@Test func aPositionAheadOfTheServiceOnTheSameStoreIsARestart() {
    var feed = EventFeed(start: .after(.init(store: nil, seq: 9)))
    let out = feed.deliveries(
        for: [.replaced(seq: 4)], replica: state(at: 4), store: nil, history: history(1...4))
    #expect(out == [.restart(state(at: 4), .historyGone(after: 9, upTo: 4))])
}

/// An event of the service's own history whose name breaks the rules is never handed to
/// `events` or `on-change`: the feed restarts from the replica instead, saying why.
@Test func historyWithANameThatBreaksTheRulesIsOneRestart() {
    var feed = EventFeed(start: .after(.init(store: storeA, seq: 2)))
    let replica = state(at: 6)
    let forged = Event(
        seq: 4, kind: .added(IndexedCountry(index: seed.count, name: "Evil\u{1B}[2J", visited: false)),
        store: storeA)
    let out = feed.deliveries(
        for: [.replaced(seq: 6)], replica: replica, store: storeA,
        history: { _ in ([visit(3), forged, visit(5), visit(6)], storeA, false) })
    guard case .restart(let state, .invalidEvent(4, let reason)) = out.last else {
        Issue.record("not a restart for the invalid event: \(out)")
        return
    }
    #expect(state == replica)
    #expect(reason.contains(#""Evil\u{1B}[2J""#), "\(reason)")
    #expect(seqs(out).isEmpty, "no event before the restart is delivered on its own")
    #expect(feed.position == .init(store: storeA, seq: 6))
    let said = EventFeed.RestartReason.invalidEvent(seq: 4, reason: reason).describe(now: 6)
    #expect(!said.unicodeScalars.contains(where: VisibleText.isEscaped), "\(said)")
}

/// An audit's peer listed seq 2^62 and answered every history with 500 events and `more`: the
/// feed held every page before handing any over, 10 MB more a second. Past what a store keeps
/// at most, the catch-up is one restart instead.
@Test func historyLongerThanAnyStoreKeepsIsOneRestart() {
    let asked = Box()
    var feed = EventFeed(start: .after(.init(store: storeA, seq: 2)))
    let far: UInt64 = 1 << 62
    let replica = state(at: far)
    let out = feed.deliveries(
        for: [.replaced(seq: far)], replica: replica, store: storeA,
        history: { since in
            asked.values.append(since)
            return ((since + 1)...(since + 1_000)).map { visit($0) }.pageOfMore
        })
    #expect(out == [.restart(replica, .historyTooLong(after: 2, upTo: far))])
    let pageBytes = 1_000 * visit(3).estimatedBytes
    #expect(
        asked.values.count <= EventFeed.maximumCatchUpBytes / pageBytes + 1,
        "pages asked: \(asked.values.count)")
    #expect(feed.position == .init(store: storeA, seq: far))
}

extension [Event] {
    /// These events as a history page that says more follow.
    fileprivate var pageOfMore: EventFeed.HistoryPage { (self, storeA, true) }
}
