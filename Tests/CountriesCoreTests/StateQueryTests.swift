import CountriesCore
import Testing

@Suite struct QueryTests {
    private let state = CountriesState(countries: standardCountries(visited: [0, 5]), seq: 17)

    @Test func list() throws {
        let reply = try state.answer(.list)
        let rows = standardCountries(visited: [0, 5]).enumerated().map {
            IndexedCountry($0.element, at: $0.offset)
        }
        #expect(reply == Reply(seq: 17, countries: rows))
        #expect(reply.ok && reply.country == nil && reply.count == nil && reply.error == nil)
    }

    @Test func listOfAnEmptyState() throws {
        #expect(try CountriesState(countries: []).answer(.list) == Reply(seq: 0, countries: []))
    }

    @Test func count() throws {
        #expect(try state.answer(.count) == Reply(seq: 17, count: 8))
        #expect(try CountriesState(countries: [], seq: 3).answer(.count) == Reply(seq: 3, count: 0))
    }

    @Test(arguments: [
        (CountryReference.index(5), 5), (.name("Russia"), 5), (.name(" rUSSIA "), 5), (.index(0), 0),
        (.name("romania"), 7), (.index(7), 7),
    ])
    func get(reference: CountryReference, index: Int) throws {
        let reply = try state.answer(.get(reference))
        let expected = IndexedCountry(
            index: index, name: standardNames[index], visited: [0, 5].contains(index))
        #expect(reply == Reply(seq: 17, country: expected))
    }

    @Test func getErrors() {
        #expect(
            throws: CountriesError(
                .indexOutOfRange, "index 8 is out of range: there are 8 countries (indexes 0 to 7)")
        ) {
            try state.answer(.get(.index(8)))
        }
        #expect(
            throws: CountriesError(
                .indexOutOfRange, "index -1 is out of range: there are 8 countries (indexes 0 to 7)")
        ) {
            try state.answer(.get(.index(-1)))
        }
        #expect(
            throws: CountriesError(.notFound, "no country named \"Narnia\"; `countries list` shows the names")
        ) {
            try state.answer(.get(.name("Narnia")))
        }
    }

    @Test func readersOfTheState() throws {
        #expect(state.count == 8)
        #expect(state.visitedCount == 2)
        #expect(state.rows.map(\.index) == Array(0..<8))
        #expect(state.rows.map(\.name) == standardNames)
        #expect(try state.country(at: 5) == Country(name: "Russia", visited: true))
        #expect(throws: CountriesError.self) { try state.country(at: 8) }
        #expect(state.index(named: "\tmoldova ") == 6)
        #expect(state.index(named: "Moldov") == nil)
        #expect(try state.index(of: .index(3)) == 3)
        #expect(try state.row(.name("ITALY")) == IndexedCountry(index: 3, name: "Italy", visited: false))
    }

    @Test func initFromRows() {
        let rows = [
            IndexedCountry(index: 0, name: "Japan", visited: true),
            .init(index: 1, name: "Peru", visited: false),
        ]
        let fromRows = CountriesState(rows: rows, seq: 9)
        #expect(
            fromRows
                == CountriesState(
                    countries: [Country(name: "Japan", visited: true), Country(name: "Peru")], seq: 9))
        #expect(fromRows.rows == rows)
    }
}

@Suite struct ErrorMessageTests {
    @Test func indexOutOfRangeMessages() {
        func message(_ index: Int, count: Int) -> String? {
            let state = CountriesState(countries: (0..<count).map { Country(name: "C\($0)") })
            return refusal(.toggle(.index(index)), on: state, seed: [])?.message
        }
        #expect(message(12, count: 8) == "index 12 is out of range: there are 8 countries (indexes 0 to 7)")
        #expect(message(-3, count: 8) == "index -3 is out of range: there are 8 countries (indexes 0 to 7)")
        #expect(message(1, count: 1) == "index 1 is out of range: there is 1 country (index 0)")
        #expect(message(0, count: 0) == "index 0 is out of range: there are 0 countries")
        #expect(
            message(Int.max, count: 2)
                == "index 9223372036854775807 is out of range: there are 2 countries (indexes 0 to 1)")
    }

    @Test func descriptionIsTheMessage() {
        let error = CountriesError(.notFound, "no country named \"X\"")
        #expect(error.description == "no country named \"X\"")
        #expect("\(error)" == "no country named \"X\"")
    }

    @Test func codesAreTheProtocolNames() {
        #expect(
            CountriesError.Code.allCases.map(\.rawValue) == [
                "bad_request", "unknown_op", "index_out_of_range", "not_found", "duplicate", "invalid_name",
                "too_large", "conflict", "history_truncated", "forbidden", "storage_error", "unavailable",
            ])
    }
}

@Suite struct CountryNameTests {
    @Test(arguments: [
        ("France", "France"), ("  France  ", "France"), ("\t\nFrance\r\n", "France"),
        ("Côte d’Ivoire", "Côte d’Ivoire"),
        ("Bosnia and Herzegovina", "Bosnia and Herzegovina"), ("日本", "日本"), ("🇫🇷 France", "🇫🇷 France"),
        ("Guinea-Bissau", "Guinea-Bissau"), ("\u{A0}Chile\u{3000}", "Chile"), ("A\u{200D}B", "A\u{200D}B"),
    ])
    func validNames(raw: String, expected: String) throws {
        #expect(try CountryName.validate(raw) == expected)
    }

    @Test func lengthCountsCharactersAfterTrimming() throws {
        #expect(try CountryName.validate("   " + String(repeating: "a", count: 100) + "   ").count == 100)
        #expect(try CountryName.validate(String(repeating: "🇫🇷", count: 100)).count == 100)
        #expect(throws: CountriesError.self) { try CountryName.validate(String(repeating: "🇫🇷", count: 101)) }
    }

    @Test func matching() {
        #expect(CountryName.matches("France", "france"))
        #expect(CountryName.matches(" FRANCE ", "france"))
        #expect(CountryName.matches("Côte", "CÔTE"))
        #expect(!CountryName.matches("France", "Francе"))  // Cyrillic е
        #expect(!CountryName.matches("France", "Fran ce"))
        #expect(CountryName.foldedKey("  United STATES\n") == "united states")
    }
}
