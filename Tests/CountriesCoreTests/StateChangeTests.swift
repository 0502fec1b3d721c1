import CountriesCore
import Testing

/// References to France (row 2 of the standard seed) in every form a client may use.
private let franceReferences: [CountryReference] = [
    .index(2), .name("France"), .name("france"), .name("FRANCE"), .name("  fRaNcE\t"), .name("\nFrance \n"),
]

/// References to the United States (row 0, visited in the seed).
private let unitedStatesReferences: [CountryReference] = [
    .index(0), .name("United States"), .name("united states"), .name(" UNITED STATES "),
]

@Suite struct ToggleTests {
    @Test(arguments: franceReferences)
    func toggleUnvisitedMarksItVisited(reference: CountryReference) throws {
        var state = standardState(seq: 41)
        let result = try state.apply(.toggle(reference), seed: SeedList.standard)
        let row = IndexedCountry(index: 2, name: "France", visited: true)
        #expect(state == CountriesState(countries: standardCountries(visited: [0, 2]), seq: 42))
        #expect(result.reply == Reply(seq: 42, country: row))
        #expect(result.event == Event(seq: 42, kind: .changed(row)))
        #expect(result.event?.topic == .countryChanged)
    }

    @Test(arguments: unitedStatesReferences)
    func toggleVisitedMarksItUnvisited(reference: CountryReference) throws {
        var state = standardState()
        let result = try state.apply(.toggle(reference), seed: SeedList.standard)
        let row = IndexedCountry(index: 0, name: "United States", visited: false)
        #expect(state == CountriesState(countries: standardCountries(visited: []), seq: 1))
        #expect(result.reply == Reply(seq: 1, country: row))
        #expect(result.event == Event(seq: 1, kind: .changed(row)))
    }

    @Test func toggleTwiceRestoresTheRowsAndAdvancesSeqTwice() throws {
        var state = standardState()
        let first = try state.apply(.toggle(.index(7)), seed: SeedList.standard)
        let second = try state.apply(.toggle(.name("romania")), seed: SeedList.standard)
        #expect(state == standardState(seq: 2))
        #expect(first.event == Event(seq: 1, kind: .changed(.init(index: 7, name: "Romania", visited: true))))
        #expect(
            second.event == Event(seq: 2, kind: .changed(.init(index: 7, name: "Romania", visited: false))))
        #expect(second.reply == Reply(seq: 2, country: .init(index: 7, name: "Romania", visited: false)))
    }

    @Test func toggleWithMatchingIfSeq() throws {
        var state = standardState(seq: 5)
        let result = try state.apply(.toggle(.index(3), ifSeq: 5), seed: SeedList.standard)
        let row = IndexedCountry(index: 3, name: "Italy", visited: true)
        #expect(state == CountriesState(countries: standardCountries(visited: [0, 3]), seq: 6))
        #expect(result.reply == Reply(seq: 6, country: row))
        #expect(result.event == Event(seq: 6, kind: .changed(row)))
    }

    @Test(arguments: [0, 4, 6, UInt64.max])
    func toggleWithStaleIfSeqIsAConflict(ifSeq: UInt64) {
        let state = standardState(seq: 5)
        let error = refusal(.toggle(.index(3), ifSeq: ifSeq), on: state)
        #expect(
            error
                == CountriesError(
                    .conflict,
                    "if_seq \(ifSeq) is not the current seq 5: the list changed; read it again and retry"))
    }
}

@Suite struct SetTests {
    @Test(arguments: franceReferences)
    func setChangesTheRow(reference: CountryReference) throws {
        var state = standardState(seq: 9)
        let result = try state.apply(.set(reference, visited: true), seed: SeedList.standard)
        let row = IndexedCountry(index: 2, name: "France", visited: true)
        #expect(state == CountriesState(countries: standardCountries(visited: [0, 2]), seq: 10))
        #expect(result.reply == Reply(seq: 10, country: row))
        #expect(result.event == Event(seq: 10, kind: .changed(row)))
    }

    @Test(arguments: unitedStatesReferences)
    func setFalseOnVisitedRow(reference: CountryReference) throws {
        var state = standardState(seq: 9)
        let result = try state.apply(.set(reference, visited: false), seed: SeedList.standard)
        let row = IndexedCountry(index: 0, name: "United States", visited: false)
        #expect(state == CountriesState(countries: standardCountries(visited: []), seq: 10))
        #expect(result.reply == Reply(seq: 10, country: row))
        #expect(result.event == Event(seq: 10, kind: .changed(row)))
    }

    @Test(arguments: [
        (CountryReference.index(0), true), (.name("united STATES"), true), (.index(2), false),
        (.name("France"), false),
    ])
    func setToTheCurrentValueIsANoOpWithoutEvent(reference: CountryReference, visited: Bool) throws {
        var state = standardState(seq: 9)
        let result = try state.apply(.set(reference, visited: visited), seed: SeedList.standard)
        let index = visited ? 0 : 2
        #expect(state == standardState(seq: 9))
        #expect(result.reply == Reply(seq: 9, country: .init(SeedList.standard[index], at: index)))
        #expect(result.event == nil)
    }

    @Test func noOpSetWithMatchingIfSeq() throws {
        var state = standardState(seq: 9)
        let result = try state.apply(.set(.index(1), visited: false, ifSeq: 9), seed: SeedList.standard)
        #expect(state == standardState(seq: 9))
        #expect(
            result.reply == Reply(seq: 9, country: .init(index: 1, name: "United Kingdom", visited: false)))
        #expect(result.event == nil)
    }

    @Test func setWithMatchingIfSeq() throws {
        var state = standardState(seq: 9)
        let result = try state.apply(.set(.name("spain"), visited: true, ifSeq: 9), seed: SeedList.standard)
        let row = IndexedCountry(index: 4, name: "Spain", visited: true)
        #expect(state == CountriesState(countries: standardCountries(visited: [0, 4]), seq: 10))
        #expect(result.reply == Reply(seq: 10, country: row))
        #expect(result.event == Event(seq: 10, kind: .changed(row)))
    }

    @Test(arguments: [true, false])
    func setWithStaleIfSeqIsAConflictEvenWhenItWouldChangeNothing(visited: Bool) {
        let state = standardState(seq: 9)
        let error = refusal(.set(.index(1), visited: visited, ifSeq: 8), on: state)
        #expect(error?.code == .conflict)
        #expect(
            error?.message == "if_seq 8 is not the current seq 9: the list changed; read it again and retry")
    }
}

@Suite struct AddTests {
    @Test func addAppendsUnvisitedByDefault() throws {
        var state = standardState(seq: 3)
        let result = try state.apply(.add(name: "Portugal"), seed: SeedList.standard)
        let row = IndexedCountry(index: 8, name: "Portugal", visited: false)
        #expect(state == CountriesState(countries: SeedList.standard + [Country(name: "Portugal")], seq: 4))
        #expect(result.reply == Reply(seq: 4, country: row))
        #expect(result.event == Event(seq: 4, kind: .added(row)))
        #expect(result.event?.topic == .countryAdded)
    }

    @Test func addVisitedTrimsTheName() throws {
        var state = standardState()
        let result = try state.apply(
            .add(name: "\t  Côte d’Ivoire \n", visited: true), seed: SeedList.standard)
        let row = IndexedCountry(index: 8, name: "Côte d’Ivoire", visited: true)
        #expect(
            state
                == CountriesState(
                    countries: SeedList.standard + [Country(name: "Côte d’Ivoire", visited: true)], seq: 1))
        #expect(result.reply == Reply(seq: 1, country: row))
        #expect(result.event == Event(seq: 1, kind: .added(row)))
        // The added row is found by name afterwards, in any case.
        #expect(try state.index(of: .name("CÔTE D’IVOIRE")) == 8)
    }

    @Test func addToAnEmptyList() throws {
        var state = CountriesState(countries: [])
        let result = try state.apply(.add(name: "Japan"), seed: [])
        #expect(state == CountriesState(countries: [Country(name: "Japan")], seq: 1))
        #expect(result.event == Event(seq: 1, kind: .added(.init(index: 0, name: "Japan", visited: false))))
    }

    @Test(arguments: ["France", "france", "FRANCE", "  France  ", "fRANCE\n"])
    func addDuplicateIsRefused(name: String) {
        let error = refusal(.add(name: name), on: standardState(seq: 2))
        #expect(error == CountriesError(.duplicate, "\"France\" is already in the list, at index 2"))
    }

    @Test(arguments: [
        "", " ", "\t\n ", String(repeating: "a", count: 101), "Fr\u{0}ance", "Fr\tance", "Fr\nance",
        "Fr\u{1B}[31mance", "Fr\u{7F}ance", "Fr\u{85}ance", "Fr\u{2028}ance", "Fr\u{2029}ance",
        "\u{202E}ecnarF",
        "Fr\u{202A}ance", "Fr\u{2066}ance", "Fr\u{2069}ance", "Fr\u{378}ance",
    ])
    func addInvalidNameIsRefused(name: String) {
        let error = refusal(.add(name: name), on: standardState(seq: 2))
        #expect(error?.code == .invalidName)
    }

    @Test func invalidNameMessages() {
        let state = standardState()
        #expect(refusal(.add(name: "  "), on: state)?.message == "a country name must not be empty")
        #expect(
            refusal(.add(name: String(repeating: "x", count: 101)), on: state)?.message
                == "a country name may have at most 100 characters; this one has 101")
        #expect(
            refusal(.add(name: "A\u{202E}B"), on: state)?.message
                == "a country name must not contain control characters")
    }

    @Test func addAtTheNameLengthLimit() throws {
        var state = standardState()
        let name = String(repeating: "é", count: 100)
        let result = try state.apply(.add(name: "  " + name + "  "), seed: SeedList.standard)
        #expect(result.reply.country == IndexedCountry(index: 8, name: name, visited: false))
        #expect(state.seq == 1 && state.count == 9)
    }

    @Test func addToAFullListIsTooLarge() {
        let full = (0..<Limits.maximumCountries).map { Country(name: "Country \($0)") }
        let state = CountriesState(countries: full, seq: 77)
        let error = refusal(.add(name: "One More"), on: state, seed: full)
        #expect(error == CountriesError(.tooLarge, "the list is full: it may hold at most 10000 countries"))
        // A duplicate in a full list is still named a duplicate.
        #expect(refusal(.add(name: "country 9999"), on: state, seed: full)?.code == .duplicate)
    }

    @Test func addFillsTheListToExactlyTheLimit() throws {
        let almost = (0..<(Limits.maximumCountries - 1)).map { Country(name: "Country \($0)") }
        var state = CountriesState(countries: almost, seq: 0)
        let result = try state.apply(.add(name: "Last"), seed: almost)
        #expect(result.reply == Reply(seq: 1, country: .init(index: 9_999, name: "Last", visited: false)))
        #expect(state.count == Limits.maximumCountries)
    }
}

@Suite struct RemoveTests {
    @Test(arguments: franceReferences)
    func removeShiftsLaterRowsUp(reference: CountryReference) throws {
        var state = standardState(seq: 12)
        let result = try state.apply(.remove(reference), seed: SeedList.standard)
        let row = IndexedCountry(index: 2, name: "France", visited: false)
        var expected = SeedList.standard
        expected.remove(at: 2)
        #expect(state == CountriesState(countries: expected, seq: 13))
        #expect(result.reply == Reply(seq: 13, country: row))
        #expect(result.event == Event(seq: 13, kind: .removed(row)))
        #expect(result.event?.topic == .countryRemoved)
        // Later rows moved up: Italy is now at 2.
        #expect(try state.row(.index(2)) == IndexedCountry(index: 2, name: "Italy", visited: false))
        #expect(state.index(named: "France") == nil)
        #expect(try state.index(of: .name("romania")) == 6)
    }

    @Test func removeReportsTheRowAsItWas() throws {
        var state = standardState()
        let result = try state.apply(.remove(.name("united states")), seed: SeedList.standard)
        let row = IndexedCountry(index: 0, name: "United States", visited: true)
        #expect(state == CountriesState(countries: Array(SeedList.standard.dropFirst()), seq: 1))
        #expect(result.reply == Reply(seq: 1, country: row))
        #expect(result.event == Event(seq: 1, kind: .removed(row)))
    }

    @Test func removeLastThenAddTheSameNameAgain() throws {
        var state = standardState()
        _ = try state.apply(.remove(.index(7)), seed: SeedList.standard)
        let result = try state.apply(.add(name: "ROMANIA"), seed: SeedList.standard)
        #expect(result.event == Event(seq: 2, kind: .added(.init(index: 7, name: "ROMANIA", visited: false))))
        #expect(
            state
                == CountriesState(
                    countries: Array(SeedList.standard.dropLast()) + [Country(name: "ROMANIA")], seq: 2))
    }

    @Test func removeEveryRowEmptiesTheList() throws {
        var state = standardState()
        for expectedSeq in 1...8 {
            let result = try state.apply(.remove(.index(0)), seed: SeedList.standard)
            #expect(result.reply.seq == UInt64(expectedSeq))
        }
        #expect(state == CountriesState(countries: [], seq: 8))
        #expect(
            refusal(.remove(.index(0)), on: state)
                == CountriesError(.indexOutOfRange, "index 0 is out of range: there are 0 countries"))
    }
}

@Suite struct ResetTests {
    @Test func resetPutsTheSeedBack() throws {
        var state = standardState()
        _ = try state.apply(.remove(.index(0)), seed: SeedList.standard)
        _ = try state.apply(.add(name: "Japan", visited: true), seed: SeedList.standard)
        _ = try state.apply(.toggle(.name("italy")), seed: SeedList.standard)
        let result = try state.apply(.reset, seed: SeedList.standard)
        let rows = SeedList.standard.enumerated().map { IndexedCountry($0.element, at: $0.offset) }
        #expect(state == standardState(seq: 4))
        #expect(result.reply == Reply(seq: 4, countries: rows))
        #expect(result.event == Event(seq: 4, kind: .reset(rows)))
        #expect(result.event?.topic == .countriesReset)
        // Names are found again after a reset (the lookup keys were rebuilt).
        #expect(try state.index(of: .name("UNITED STATES")) == 0)
        #expect(state.index(named: "Japan") == nil)
    }

    @Test func resetOfAnUnchangedListIsStillAnEvent() throws {
        var state = standardState(seq: 3)
        let result = try state.apply(.reset, seed: SeedList.standard)
        #expect(state == standardState(seq: 4))
        #expect(result.event?.seq == 4)
    }

    @Test func resetToADifferentSeed() throws {
        let seed = [Country(name: "Japan", visited: true), Country(name: "Chile")]
        var state = standardState(seq: 10)
        let result = try state.apply(.reset, seed: seed)
        let rows = [
            IndexedCountry(index: 0, name: "Japan", visited: true),
            .init(index: 1, name: "Chile", visited: false),
        ]
        #expect(state == CountriesState(countries: seed, seq: 11))
        #expect(result.reply == Reply(seq: 11, countries: rows))
        #expect(result.event == Event(seq: 11, kind: .reset(rows)))
        #expect(refusal(.add(name: "chile"), on: state, seed: seed)?.code == .duplicate)
    }

    @Test func resetToAnEmptySeed() throws {
        var state = standardState()
        let result = try state.apply(.reset, seed: [])
        #expect(state == CountriesState(countries: [], seq: 1))
        #expect(result.reply == Reply(seq: 1, countries: []))
        #expect(result.event == Event(seq: 1, kind: .reset([])))
    }
}

@Suite struct ReferenceErrorTests {
    private static let badIndexes = [8, 9, 12, -1, -8, Int.max, Int.min]

    private static var changes: [(CountryReference) -> Change] {
        [
            { .toggle($0) }, { .toggle($0, ifSeq: 4) }, { .set($0, visited: true) },
            { .set($0, visited: false) },
            { .set($0, visited: true, ifSeq: 4) }, { .remove($0) },
        ]
    }

    @Test(arguments: badIndexes)
    func indexOutOfRangeLeavesTheStateAsItWas(index: Int) {
        let state = standardState(seq: 4)
        for change in Self.changes {
            let error = refusal(change(.index(index)), on: state)
            #expect(
                error
                    == CountriesError(
                        .indexOutOfRange,
                        "index \(index) is out of range: there are 8 countries (indexes 0 to 7)"))
        }
    }

    @Test(arguments: ["Atlantis", "", "   ", "Franc", "France!", "Fr ance", "Frañce"])
    func unknownNameIsNotFound(name: String) {
        let state = standardState(seq: 4)
        for change in Self.changes {
            let error = refusal(change(.name(name)), on: state)
            #expect(
                error
                    == CountriesError(
                        .notFound, "no country named \"\(name)\"; `countries list` shows the names"))
        }
    }

    @Test func ifSeqIsCheckedWhateverTheReference() {
        // With a stale if_seq, the conflict is reported (the client must re-read first).
        let state = standardState(seq: 4)
        #expect(refusal(.toggle(.index(99), ifSeq: 3), on: state)?.code == .conflict)
        #expect(refusal(.set(.name("Atlantis"), visited: true, ifSeq: 3), on: state)?.code == .conflict)
    }
}
