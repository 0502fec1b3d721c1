import CountriesCore
import Testing

@testable import CountriesClient

private func event(_ seq: UInt64, store: String? = nil) -> Event {
    Event(
        seq: seq, kind: .changed(IndexedCountry(index: 0, name: "France", visited: seq % 2 == 0)),
        store: store)
}

private func seqs(_ pending: PendingEvents) -> [UInt64] { pending.events.map(\.seq) }

/// Inserts the events of `seqs` in turn; whether each was kept with what the buffer held.
private func insert(_ seqs: [UInt64], into pending: inout PendingEvents) -> [Bool] {
    seqs.map { pending.insert(event($0)) }
}

@Test func eventsAreKeptInSeqOrderEachSeqOnce() {
    var pending = PendingEvents(limit: 10)
    #expect(insert([5, 3, 9, 3, 4, 9, 1, 7], into: &pending) == Array(repeating: true, count: 8))
    #expect(seqs(pending) == [1, 3, 4, 5, 7, 9])
    #expect(pending.first?.seq == 1)
    #expect(pending.last?.seq == 9)
}

@Test func aDuplicateKeepsTheEventReceivedFirst() {
    var pending = PendingEvents(limit: 10)
    _ = pending.insert(event(4, store: "first"))
    _ = pending.insert(event(6))
    _ = pending.insert(event(4, store: "second"))
    #expect(pending.events.map(\.store) == ["first", nil])
}

@Test func aFullBufferForgetsWhatItHeldAndKeepsTheNewEvent() {
    var pending = PendingEvents(limit: 3)
    #expect(insert([2, 3, 4, 9], into: &pending) == [true, true, true, false])
    #expect(seqs(pending) == [9])
    // A duplicate of an event held counts too: the buffer is full whatever comes.
    #expect(insert([10, 11, 10], into: &pending) == [true, true, false])
    #expect(seqs(pending) == [10])
}

@Test func aLimitBelowOneKeepsOne() {
    var pending = PendingEvents(limit: 0)
    #expect(pending.limit == 1)
    #expect(insert([1, 2], into: &pending) == [true, false])
    #expect(seqs(pending) == [2])
}

@Test func droppingThroughASeqForgetsOnlyTheEventsUpToIt() {
    var pending = PendingEvents(limit: 10)
    for seq: UInt64 in [2, 4, 5, 8] { _ = pending.insert(event(seq)) }
    pending.drop(through: 1)
    #expect(seqs(pending) == [2, 4, 5, 8])
    pending.drop(through: 4)
    #expect(seqs(pending) == [5, 8])
    pending.removeFirst(1)
    #expect(seqs(pending) == [8])
    pending.drop(through: 100)
    #expect(pending.isEmpty)
}

@Test func eventsOfAnotherStoreCanBeForgotten() {
    var pending = PendingEvents(limit: 10)
    for (seq, store) in [(1, "a"), (2, nil), (3, "b"), (4, "a")] as [(UInt64, String?)] {
        _ = pending.insert(event(seq, store: store))
    }
    pending.removeAll { $0.store != nil && $0.store != "a" }
    #expect(seqs(pending) == [1, 2, 4])
    pending.removeAll()
    #expect(pending.isEmpty)
}
