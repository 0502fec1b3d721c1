import CountriesCore
import Foundation
import Testing

@Suite struct SeedListTests {
    private func parse(_ contents: String) throws(CountriesError) -> [Country] {
        try SeedList.parse(Data(contents.utf8))
    }

    @Test func standardIsTheSeedsEightInOrder() {
        #expect(SeedList.standard.map(\.name) == standardNames)
        #expect(SeedList.standard.map(\.visited) == [true, false, false, false, false, false, false, false])
        #expect(SeedList.standard == standardCountries())
    }

    @Test func worldNamesAreValid() throws {
        let world = SeedList.world
        #expect(!world.isEmpty)
        #expect(world.allSatisfy { !$0.visited })
        #expect(try SeedList.parse(Data(world.map(\.name).joined(separator: "\n").utf8)) == world)
    }

    @Test func jsonArrayOfStrings() throws {
        #expect(try parse(#"["France", "  Japan "]"#) == [Country(name: "France"), Country(name: "Japan")])
        #expect(try parse(" [ ] ") == [])
    }

    @Test func jsonArrayOfObjectsAndMixed() throws {
        #expect(
            try parse(
                #"[{"name":"France","visited":true},{"name":"Japan"},"Peru",{"name":"Chile","visited":false}]"#
            )
                == [
                    Country(name: "France", visited: true), Country(name: "Japan"), Country(name: "Peru"),
                    Country(name: "Chile"),
                ])
    }

    @Test func textLinesWithBlanksAndComments() throws {
        let text = """
            # The seed's list
            United States

              United Kingdom  \t
            # France is next
            France
            \t
            """
        #expect(
            try parse(text) == [
                Country(name: "United States"), Country(name: "United Kingdom"), Country(name: "France"),
            ])
        #expect(try parse("") == [])
        #expect(try parse("# only a comment\n\n") == [])
    }

    @Test func textWithWindowsLineEndings() throws {
        #expect(
            try parse("France\r\nJapan\r\n# c\r\n\r\nPeru\r\n") == [
                Country(name: "France"), Country(name: "Japan"), Country(name: "Peru"),
            ])
        #expect(try parse("France\rJapan") == [Country(name: "France"), Country(name: "Japan")])
    }

    @Test func aByteOrderMarkIsNotPartOfTheFirstName() throws {
        #expect(try parse("\u{FEFF}France\nJapan") == [Country(name: "France"), Country(name: "Japan")])
        #expect(try parse("\u{FEFF}[\"France\"]") == [Country(name: "France")])
    }

    @Test func theStandardListAsTextRoundTrips() throws {
        let text = SeedList.standard.map(\.name).joined(separator: "\n")
        #expect(try parse(text) == SeedList.standard.map { Country(name: $0.name) })
    }

    @Test func duplicatesAreRefusedWithBothPlaces() {
        #expect(throws: CountriesError(.duplicate, "line 4: \"FRANCE\" is already listed at line 1")) {
            try parse("France\nJapan\n\n FRANCE \n")
        }
        #expect(throws: CountriesError(.duplicate, "element 2: \"france\" is already listed at element 0")) {
            try parse(#"["France", "Japan", {"name": "france"}]"#)
        }
    }

    @Test func invalidNamesAreRefusedWithTheLine() {
        #expect(
            throws: CountriesError(.invalidName, "line 3: a country name must not contain control characters")
        ) {
            try parse("France\n# x\nJa\u{1B}pan\n")
        }
        let long = String(repeating: "a", count: 101)
        #expect(
            throws: CountriesError(
                .invalidName, "line 2: a country name may have at most 100 characters; this one has 101")
        ) {
            try parse("France\n\(long)")
        }
        #expect(throws: CountriesError(.invalidName, "element 1: a country name must not be empty")) {
            try parse(#"["France", "  "]"#)
        }
    }

    @Test func malformedJSONEntries() {
        #expect(throws: CountriesError(.badRequest, "element 1 has no \"name\" string")) {
            try parse(#"["France", {"visited": true}]"#)
        }
        #expect(throws: CountriesError(.badRequest, "element 0 has no \"name\" string")) {
            try parse(#"[{"name": 3}]"#)
        }
        #expect(throws: CountriesError(.badRequest, "element 0: \"visited\" must be true or false")) {
            try parse(#"[{"name": "France", "visited": "yes"}]"#)
        }
        #expect(throws: CountriesError(.badRequest, "element 0 must be a name or {\"name\", \"visited\"}")) {
            try parse("[1]")
        }
    }

    @Test func notUTF8() {
        #expect(throws: CountriesError(.badRequest, "the seed file is neither a JSON array nor UTF-8 text")) {
            try SeedList.parse(Data([0x46, 0xFF, 0x0A]))
        }
    }

    @Test func sizeLimit() throws {
        let names = (0..<Limits.maximumCountries).map { "Country \($0)" }
        #expect(try parse(names.joined(separator: "\n")).count == 10_000)
        #expect(
            throws: CountriesError(.tooLarge, "the seed list has 10001 countries; at most 10000 are allowed")
        ) {
            try parse((names + ["One More"]).joined(separator: "\n"))
        }
        let json = "[" + (names + ["One More"]).map { "\"\($0)\"" }.joined(separator: ",") + "]"
        #expect(
            throws: CountriesError(.tooLarge, "the seed list has 10001 countries; at most 10000 are allowed")
        ) {
            try parse(json)
        }
    }
}
