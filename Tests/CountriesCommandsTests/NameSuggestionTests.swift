import Testing

@testable import CountriesCommands

/// "Did you mean" after a name the service does not know (``NameSuggestion``).
@Suite struct NameSuggestionTests {
    private let names = ["France", "Spain", "Italy", "Côte d'Ivoire", "Guinea", "Guinea-Bissau"]

    @Test func aTypoFindsTheName() {
        #expect(NameSuggestion.closest(to: "Frnace", among: names) == "France")
        #expect(NameSuggestion.closest(to: "itly", among: names) == "Italy")
    }

    @Test func caseAndAccentsAreNotTyposAtAll() {
        #expect(NameSuggestion.closest(to: "cote d'ivoire", among: names) == "Côte d'Ivoire")
        #expect(NameSuggestion.closest(to: "COTE D'IVOIRE", among: names) == "Côte d'Ivoire")
    }

    @Test func theClosestOfSeveralWins() {
        #expect(NameSuggestion.closest(to: "Guinea-Bisau", among: names) == "Guinea-Bissau")
        #expect(NameSuggestion.closest(to: "Guina", among: names) == "Guinea")
    }

    @Test func aNameFarFromAllIsNoTypo() {
        #expect(NameSuggestion.closest(to: "Atlantis", among: names) == nil)
        #expect(NameSuggestion.closest(to: "X", among: names) == nil)
        #expect(NameSuggestion.closest(to: "France", among: []) == nil)
    }
}
