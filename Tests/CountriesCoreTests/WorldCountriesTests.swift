import Testing

@testable import CountriesCore

@Suite struct WorldCountriesTests {
    @Test func hasEveryISO3166Entry() {
        #expect(SeedList.worldNames.count == 249)
    }

    @Test func namesAreUniqueIgnoringCase() {
        let lowercased = SeedList.worldNames.map { $0.lowercased() }
        #expect(Set(lowercased).count == lowercased.count)
    }

    /// Plain `String` `<` order, as the declaration documents; "Åland Islands" therefore comes
    /// last.
    @Test func namesAreSorted() {
        #expect(SeedList.worldNames == SeedList.worldNames.sorted())
        #expect(SeedList.worldNames.first == "Afghanistan")
        #expect(SeedList.worldNames.last == "Åland Islands")
    }

    @Test(arguments: [
        "United States", "United Kingdom", "France", "Italy", "Spain", "Russia", "Moldova", "Romania",
    ])
    func containsSeedCountry(_ name: String) {
        #expect(SeedList.worldNames.contains(name))
    }

    @Test func everyNameIsValid() {
        for name in SeedList.worldNames {
            #expect((1...100).contains(name.count), "\(name)")
            #expect(name.trimmingWhitespace() == name, "\(name)")
            #expect(
                !name.unicodeScalars.contains { $0.properties.generalCategory == .control },
                "\(name)"
            )
        }
    }
}

extension String {
    /// The string without leading or trailing whitespace (no Foundation needed).
    fileprivate func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
