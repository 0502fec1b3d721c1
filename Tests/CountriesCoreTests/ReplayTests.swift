import CountriesCore
import Foundation
import TestSupport
import Testing

/// A naive model of the list, written independently of `CountriesState`, to check it against.
private struct Model {
    var countries: [Country]
    var seq: UInt64

    private static func key(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    func find(_ reference: CountryReference) -> Int? {
        switch reference {
        case .index(let index): return (0..<countries.count).contains(index) ? index : nil
        case .name(let name): return countries.firstIndex { Self.key($0.name) == Self.key(name) }
        }
    }

    /// The expected row of the reply, or nil when the change must be refused.
    mutating func apply(_ change: Change, seed: [Country]) -> (row: IndexedCountry?, changed: Bool)? {
        switch change {
        case .toggle(let reference, let ifSeq):
            guard ifSeq == nil || ifSeq == seq, let index = find(reference) else { return nil }
            countries[index].visited.toggle()
            seq += 1
            return (IndexedCountry(countries[index], at: index), true)
        case .set(let reference, let visited, let ifSeq):
            guard ifSeq == nil || ifSeq == seq, let index = find(reference) else { return nil }
            let changed = countries[index].visited != visited
            countries[index].visited = visited
            if changed { seq += 1 }
            return (IndexedCountry(countries[index], at: index), changed)
        case .add(let name, let visited):
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, find(.name(trimmed)) == nil, countries.count < 10_000 else { return nil }
            countries.append(Country(name: trimmed, visited: visited))
            seq += 1
            return (IndexedCountry(countries[countries.count - 1], at: countries.count - 1), true)
        case .remove(let reference):
            guard let index = find(reference) else { return nil }
            let row = IndexedCountry(countries.remove(at: index), at: index)
            seq += 1
            return (row, true)
        case .reset:
            countries = seed
            seq += 1
            return (nil, true)
        }
    }
}

private let namePool = [
    "France", "Japan", "Chile", "Peru", "Kenya", "Norway", "Iceland", "Nepal", "Ghana", "Laos", "Cuba",
    "Oman",
    "Italy", "Spain", "Romania", "Côte d’Ivoire",
]

private func randomName(_ rng: inout SplitMix64) -> String {
    var name = namePool.randomElement(using: &rng)!
    switch Int.random(in: 0..<6, using: &rng) {
    case 0: name = name.uppercased()
    case 1: name = name.lowercased()
    case 2: name = "  " + name + "\t"
    default: break
    }
    return name
}

private func randomReference(_ rng: inout SplitMix64, count: Int) -> CountryReference {
    if Bool.random(using: &rng) {
        return .index(Int.random(in: -1...(count + 1), using: &rng))
    }
    return .name(randomName(&rng))
}

private func randomChange(_ rng: inout SplitMix64, state: CountriesState) -> Change {
    let ifSeq: UInt64? =
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: state.seq
        case 1: state.seq &+ 1
        default: nil
        }
    switch Int.random(in: 0..<100, using: &rng) {
    case 0..<35: return .toggle(randomReference(&rng, count: state.count), ifSeq: ifSeq)
    case 35..<60:
        return .set(randomReference(&rng, count: state.count), visited: .random(using: &rng), ifSeq: ifSeq)
    case 60..<78:
        return .add(
            name: Int.random(in: 0..<10, using: &rng) == 0 ? " " : randomName(&rng),
            visited: .random(using: &rng))
    case 78..<98: return .remove(randomReference(&rng, count: state.count))
    default: return .reset
    }
}

@Suite struct ReplayTests {
    /// Thousands of random changes: the state matches the model; each event, sent through its wire
    /// form, brings a replica to exactly the same state.
    @Test(arguments: [1 as UInt64, 42, 0xDEAD_BEEF])
    func replicasConvergeAndTheStateMatchesAModel(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var state = standardState()
        var replica = state
        var model = Model(countries: SeedList.standard, seq: 0)
        var events = 0
        var refusals = 0
        for _ in 0..<3_000 {
            let change = randomChange(&rng, state: state)
            let before = state
            let expected = model.apply(change, seed: SeedList.standard)
            do {
                let result = try state.apply(change, seed: SeedList.standard)
                guard let expected else {
                    Issue.record("\(change) succeeded but the model refuses it")
                    return
                }
                #expect(result.reply.ok && result.reply.seq == state.seq)
                #expect(result.reply.country == expected.row)
                if let event = result.event {
                    #expect(expected.changed)
                    #expect(event.seq == before.seq + 1 && state.seq == event.seq)
                    let received = try Event.decode(event.encoded())
                    #expect(received == event)
                    try replica.replay(received)
                    events += 1
                } else {
                    #expect(!expected.changed && state == before)
                }
            } catch {
                #expect(expected == nil, "\(change) refused with \(error)")
                #expect(state == before)
                refusals += 1
            }
            #expect(state.countries == model.countries && state.seq == model.seq)
            #expect(replica == state)
            if state != replica || state.countries != model.countries { return }
        }
        #expect(events > 1_000 && refusals > 100)
        // The lookup keys stayed in step too: every row is found by its name.
        for (index, country) in state.countries.enumerated() {
            #expect(state.index(named: country.name.uppercased()) == index)
            #expect(replica.index(named: country.name.lowercased()) == index)
        }
    }

    @Test func gapsAreRefusedAndLeaveTheReplicaAsItWas() {
        let replica = standardState(seq: 3)
        let row = IndexedCountry(index: 2, name: "France", visited: true)
        for (seq, expected) in [(5 as UInt64, 4 as UInt64), (3, 4), (0, 4), (2, 4), (.max, 4)] {
            var copy = replica
            #expect(throws: ReplayError.gap(expected: expected, received: seq)) {
                try copy.replay(Event(seq: seq, kind: .changed(row)))
            }
            #expect(copy == replica)
        }
    }

    @Test func mismatchesAreRefusedAndLeaveTheReplicaAsItWas() {
        let replica = standardState(seq: 3)
        let events: [Event.Kind] = [
            .changed(.init(index: 8, name: "France", visited: true)),
            .changed(.init(index: -1, name: "France", visited: true)),
            .changed(.init(index: 3, name: "France", visited: true)),
            .removed(.init(index: 8, name: "Romania", visited: false)),
            .removed(.init(index: -1, name: "Romania", visited: false)),
            .removed(.init(index: 6, name: "Romania", visited: false)),
            .added(.init(index: 7, name: "Japan", visited: false)),
            .added(.init(index: 9, name: "Japan", visited: false)),
            .added(.init(index: -1, name: "Japan", visited: false)),
        ]
        for kind in events {
            var copy = replica
            do {
                try copy.replay(Event(seq: 4, kind: kind))
                Issue.record("\(kind) was applied")
            } catch {
                guard case .mismatch = error else {
                    Issue.record("expected a mismatch, got \(error)")
                    continue
                }
            }
            #expect(copy == replica)
        }
    }

    @Test func replayOfEachKind() throws {
        var replica = standardState(seq: 3)
        try replica.replay(Event(seq: 4, kind: .changed(.init(index: 2, name: "FRANCE", visited: true))))
        #expect(replica == CountriesState(countries: standardCountries(visited: [0, 2]), seq: 4))
        try replica.replay(Event(seq: 5, kind: .added(.init(index: 8, name: "Japan", visited: true))))
        #expect(
            replica
                == CountriesState(
                    countries: standardCountries(visited: [0, 2]) + [Country(name: "Japan", visited: true)],
                    seq: 5))
        try replica.replay(
            Event(seq: 6, kind: .removed(.init(index: 0, name: "United States", visited: true))))
        #expect(
            replica
                == CountriesState(
                    countries: Array(standardCountries(visited: [0, 2]).dropFirst()) + [
                        Country(name: "Japan", visited: true)
                    ],
                    seq: 6))
        #expect(replica.index(named: "japan") == 7)
    }

    @Test func resetReplacesWhateverTheReplicaHeld() throws {
        var replica = CountriesState(
            countries: [Country(name: "Atlantis"), Country(name: "Lemuria", visited: true)], seq: 99)
        let rows = [
            IndexedCountry(index: 0, name: "Japan", visited: true),
            .init(index: 1, name: "Peru", visited: false),
        ]
        try replica.replay(Event(seq: 100, kind: .reset(rows)))
        #expect(replica == CountriesState(rows: rows, seq: 100))
        #expect(replica.index(named: "atlantis") == nil && replica.index(named: "PERU") == 1)
    }

    /// No service lists more than ``Limits/maximumCountries`` rows: a publisher that sends more
    /// adds, or a longer reset, is refused as any other event that is not the protocol's (an
    /// audit's subscriber took 28,368 rows and grew 1.6 KB a row).
    @Test func aReplicaNeverGrowsPastTheLongestList() throws {
        let full = (0..<Limits.maximumCountries).map { Country(name: "Country \($0)") }
        var replica = CountriesState(countries: full, seq: 7)
        let add = Event(seq: 8, kind: .added(.init(index: full.count, name: "One more", visited: false)))
        #expect(throws: ReplayError.mismatch("an add past 10000 rows, the most a list has")) {
            try replica.replay(add)
        }
        let longer = (0...Limits.maximumCountries).map {
            IndexedCountry(index: $0, name: "C\($0)", visited: false)
        }
        #expect(throws: ReplayError.self) { try replica.replay(Event(seq: 8, kind: .reset(longer))) }
        #expect(replica == CountriesState(countries: full, seq: 7))
        // One row fewer takes the add.
        var almost = CountriesState(countries: Array(full.dropLast()), seq: 7)
        try almost.replay(
            Event(seq: 8, kind: .added(.init(index: full.count - 1, name: "Last", visited: false))))
        #expect(almost.count == Limits.maximumCountries)
    }

    @Test func aReplicaAtTheLargestSeqRefusesInsteadOfTrapping() {
        var replica = standardState(seq: .max)
        #expect(throws: ReplayError.self) {
            try replica.replay(Event(seq: 0, kind: .reset([])))
        }
        #expect(replica == standardState(seq: .max))
    }

    /// A copy that follows a batch's events ends equal to the state the batch made, lookups
    /// included, for batches of every size and kind (resets among them).
    @Test(arguments: [7 as UInt64, 99, 0xC0FFEE])
    func aCopyFollowsBatchesToTheSameState(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var committed = standardState()
        var follower = committed
        var batches = 0
        while batches < 400 {
            var newer = committed
            var events: [Event] = []
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                if let event = try? newer.apply(randomChange(&rng, state: newer), seed: SeedList.standard)
                    .event
                {
                    events.append(event)
                }
            }
            follower.follow(newer, through: events)
            #expect(follower == newer, "batch \(batches): \(events)")
            if follower != newer { return }
            committed = newer
            batches += 1
        }
        for (index, country) in follower.countries.enumerated() {
            #expect(follower.index(named: country.name.uppercased()) == index)
        }
    }

    /// Events that are not the copy's next ones, or do not fit its rows, make it the newer
    /// state itself rather than a wrong one.
    @Test func aCopyThatCannotFollowTakesTheNewerState() throws {
        var newer = standardState()
        let event = try #require(
            try newer.apply(.toggle(.index(2), ifSeq: nil), seed: SeedList.standard).event)
        // A gap: the copy is at seq 5, the event is seq 1.
        var ahead = standardState(seq: 5)
        ahead.follow(newer, through: [event])
        #expect(ahead == newer)
        // A row that is not where the event says.
        var other = CountriesState(countries: SeedList.standard.reversed(), seq: 0)
        other.follow(newer, through: [event])
        #expect(other == newer)
        // An outcome of another length than the newer state's.
        var shorter = CountriesState(countries: Array(SeedList.standard.dropLast()), seq: 0)
        shorter.follow(newer, through: [event])
        #expect(shorter == newer)
        // Nothing to follow, and already equal: stays as it is.
        var same = newer
        same.follow(newer, through: [])
        #expect(same == newer)
    }
}
