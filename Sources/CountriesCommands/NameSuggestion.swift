import ArgumentParsing
import Foundation

/// "Did you mean" for a name the service does not know: the list's name closest to it, compared
/// without case or accents (`cote d'ivoire` finds `Côte d'Ivoire`), when close enough to be a
/// typo. The service matches names by case only (docs/PROTOCOL.md), so this is a hint, never a
/// retry.
enum NameSuggestion {
    /// The name of `names` closest to `typed`, or nil when none is close.
    static func closest(to typed: String, among names: [String]) -> String? {
        let folded = names.map(fold)
        guard let best = closestName(to: fold(typed), among: folded), let index = folded.firstIndex(of: best)
        else { return nil }
        return names[index]
    }

    private static func fold(_ name: String) -> String {
        name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }
}
