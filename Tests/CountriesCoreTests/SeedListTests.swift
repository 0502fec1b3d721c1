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

    private static let fixTheJSON =
        "; a file that starts with [ is read as a JSON array: fix the JSON, or write one name per line without brackets or quotes"

    @Test func jsonThatDoesNotParseIsRefusedWithItsLineNotReadAsText() {
        // The issue's file: a trailing comma made four countries named "[", "\"France\",", ...
        #expect(
            throws: CountriesError(
                .badRequest,
                "line 4, column 1: not valid JSON (a comma before ] or }, a missing comma or quote?)"
                    + Self.fixTheJSON)
        ) {
            try parse("[\n \"France\",\n \"Italy\",\n]\n")
        }
        #expect(
            throws: CountriesError(
                .badRequest,
                "line 2, column 11: not valid JSON (a comma before ] or }, a missing comma or quote?)"
                    + Self.fixTheJSON)
        ) {
            try parse("\u{FEFF}  \r\n[\"France\" \"Italy\"]")
        }
        #expect(
            throws: CountriesError(
                .badRequest,
                "line 2: the file ends before the JSON does (an unclosed [, { or string?)" + Self.fixTheJSON)
        ) {
            try parse("[\"France\",\n\"Italy\"")
        }
        #expect(
            throws: CountriesError(
                .badRequest,
                "line 1, column 38: the key \"name\" is given twice in one object" + Self.fixTheJSON)
        ) {
            try parse(#"[{"name": "France", "visited": true, "name": "Italy"}]"#)
        }
        #expect(
            throws: CountriesError(
                .badRequest,
                "line 1, column 17: arrays or objects nest more than 16 levels deep" + Self.fixTheJSON)
        ) {
            try parse("[" + String(repeating: "[", count: 16) + String(repeating: "]", count: 17))
        }
    }

    @Test func jsonThatIsNotAnArrayIsRefused() {
        #expect(
            throws: CountriesError(
                .badRequest,
                "a JSON seed is an array, like [\"France\", \"Italy\"]; this file holds an object")
        ) {
            try parse(#"{"countries": ["France"]}"#)
        }
        #expect(throws: CountriesError.self) { try parse("{France}") }
    }

    @Test func textLinesThatLookLikeJSONAreRefused() throws {
        // A JSON list after a comment is text: its lines must not become countries.
        #expect(
            throws: CountriesError(
                .badRequest,
                "line 2: \"[\" looks like JSON, but the file is read as one name per line because its first character is not [; write names without brackets or quotes, or make the whole file one JSON array"
            )
        ) {
            try parse("# my list\n[\n\"France\",\n]")
        }
        for line in ["\"France\"", "]", "{\"name\": \"France\"}", "}"] {
            #expect(throws: CountriesError.self, "\(line)") { try parse("France\n  \(line)\nItaly") }
        }
        // Brackets and quotes inside a name are fine; only the start decides.
        #expect(try parse("Côte d'Ivoire\nKorea [South]\nThe \"Land\"").count == 3)
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
