import Foundation
import JSON

/// The lists a new store starts from, and that `reset` puts back.
public enum SeedList {
    /// The seed's eight countries, in its order, with the United States visited.
    public static let standard: [Country] = [
        Country(name: "United States", visited: true),
        Country(name: "United Kingdom"),
        Country(name: "France"),
        Country(name: "Italy"),
        Country(name: "Spain"),
        Country(name: "Russia"),
        Country(name: "Moldova"),
        Country(name: "Romania"),
    ]

    /// Every ISO 3166-1 country, none visited.
    public static var world: [Country] { worldNames.map { Country(name: $0) } }

    /// Parses a seed file: a JSON array of names or of `{"name", "visited"}` objects, or plain
    /// text with one name per line (blank lines and lines starting with `#` are skipped).
    ///
    /// Every name is validated as `add` would; duplicates and lists over the limit are refused
    /// with the line or element that is wrong.
    public static func parse(_ contents: Data) throws(CountriesError) -> [Country] {
        let entries: [(label: String, country: Country)]
        if let json = try? JSONParser.parse(contents, maximumNesting: Limits.maximumNesting),
            case .array(let items) = json
        {
            entries = try items.enumerated().map { (offset, item) throws(CountriesError) in
                let label = "element \(offset)"
                switch item {
                case .string(let name): return (label, Country(name: name))
                case .object(let fields):
                    guard case .string(let name)? = fields["name"] else {
                        throw CountriesError(.badRequest, "\(label) has no \"name\" string")
                    }
                    var visited = false
                    if let flag = fields["visited"] {
                        guard case .bool(let value) = flag else {
                            throw CountriesError(.badRequest, "\(label): \"visited\" must be true or false")
                        }
                        visited = value
                    }
                    return (label, Country(name: name, visited: visited))
                default:
                    throw CountriesError(.badRequest, "\(label) must be a name or {\"name\", \"visited\"}")
                }
            }
        } else {
            guard let text = String(data: contents, encoding: .utf8) else {
                throw CountriesError(.badRequest, "the seed file is neither a JSON array nor UTF-8 text")
            }
            // By Character, "\r\n" is one newline, not "\r" then "\n": split on any newline.
            let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            entries = lines.enumerated().compactMap {
                let line = String($0.element).trimmingWhitespace()
                guard !line.isEmpty, !line.hasPrefix("#") else { return nil }
                return ("line \($0.offset + 1)", Country(name: line))
            }
        }
        return try validate(entries)
    }

    private static func validate(_ entries: [(label: String, country: Country)]) throws(CountriesError)
        -> [Country]
    {
        guard entries.count <= Limits.maximumCountries else {
            throw CountriesError(
                .tooLarge,
                "the seed list has \(entries.count) countries; at most \(Limits.maximumCountries) are allowed"
            )
        }
        var seen: [String: String] = [:]
        var countries: [Country] = []
        countries.reserveCapacity(entries.count)
        for (label, country) in entries {
            let name: String
            do {
                name = try CountryName.validate(country.name)
            } catch {
                throw CountriesError(error.code, "\(label): \(error.message)")
            }
            let key = CountryName.foldedKey(name)
            if let first = seen[key] {
                throw CountriesError(.duplicate, "\(label): \"\(name)\" is already listed at \(first)")
            }
            seen[key] = label
            countries.append(Country(name: name, visited: country.visited))
        }
        return countries
    }
}
