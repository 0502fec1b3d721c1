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

/// A reset of `rows` rows of 100-byte names at `seq`.
private func reset(_ seq: UInt64, rows: Int) -> Event {
    Event(
        seq: seq,
        kind: .reset(
            (0..<rows).map {
                IndexedCountry(index: $0, name: String(repeating: "n", count: 100), visited: false)
            }))
}

@Test func theBufferIsBoundedInBytesAndKeepsOneEventHoweverBig() {
    let big = reset(2, rows: 1_000)  // about 140 KB
    var pending = PendingEvents(limit: 10_000, byteLimit: 3 * big.estimatedBytes)
    let kept1 = pending.insert(big)
    #expect(kept1)
    let kept2 = pending.insert(reset(3, rows: 1_000))
    #expect(kept2)
    let kept3 = pending.insert(reset(5, rows: 1_000))
    #expect(kept3)
    #expect(pending.bytes == 3 * big.estimatedBytes)
    // A fourth passes the bytes, not the count: the buffer starts over with it alone.
    let kept4 = pending.insert(reset(7, rows: 1_000))
    #expect(!kept4)
    #expect(seqs(pending) == [7] && pending.bytes == big.estimatedBytes)
    // Small events fit beside it until the bytes run out again.
    #expect(insert([8, 9, 10], into: &pending) == [true, true, true])
    // One event over the whole bound is kept, alone.
    let kept5 = pending.insert(reset(11, rows: 4_000))
    #expect(!kept5)
    #expect(seqs(pending) == [11])
}

@Test func theBytesFollowWhatIsForgotten() {
    var pending = PendingEvents(limit: 100, byteLimit: 1 << 30)
    for seq: UInt64 in [2, 4, 5, 8] { _ = pending.insert(event(seq, store: seq == 5 ? "b" : "a")) }
    _ = pending.insert(reset(6, rows: 10))
    _ = pending.insert(event(4))  // a duplicate adds nothing
    func sum() -> Int { pending.events.reduce(0) { $0 + $1.estimatedBytes } }
    #expect(pending.bytes == sum())
    pending.drop(through: 2)
    #expect(pending.bytes == sum())
    pending.removeAll { $0.store == "b" }
    #expect(seqs(pending) == [4, 6, 8] && pending.bytes == sum())
    pending.removeFirst(2)
    #expect(seqs(pending) == [8] && pending.bytes == sum())
    pending.removeAll()
    #expect(pending.bytes == 0)
}
