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
    /// The content decides, not the file's name: a file whose first character (after a
    /// byte-order mark and blank space) is `[` or `{` is JSON, and JSON that does not parse is
    /// refused with its line and column, never read as text (where a trailing comma would make
    /// countries named `[` and `"France",`). In text, a line that starts like JSON (`[`, `]`,
    /// `{`, `}`, `"`) is refused too: it is a JSON list whose first line is not `[`.
    ///
    /// Every name is validated as `add` would; duplicates and lists over the limit are refused
    /// with the line or element that is wrong.
    public static func parse(_ contents: Data) throws(CountriesError) -> [Country] {
        let entries = try startsLikeJSON(contents) ? jsonEntries(contents) : textEntries(contents)
        return try validate(entries)
    }

    /// Whether the first byte after a byte-order mark and blank space is `[` or `{`.
    private static func startsLikeJSON(_ contents: Data) -> Bool {
        var bytes = contents[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let blank: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C]
        let first = bytes.first { !blank.contains($0) }
        return first == UInt8(ascii: "[") || first == UInt8(ascii: "{")
    }

    private static func jsonEntries(_ contents: Data) throws(CountriesError) -> [(
        label: String, country: Country
    )] {
        let json: JSONValue
        do {
            json = try JSONParser.parseLocating(contents, maximumNesting: Limits.maximumNesting)
        } catch {
            throw CountriesError(
                .badRequest,
                "\(describe(error)); a file that starts with [ is read as a JSON array: fix the JSON, or write one name per line without brackets or quotes"
            )
        }
        guard case .array(let items) = json else {
            throw CountriesError(
                .badRequest,
                "a JSON seed is an array, like [\"France\", \"Italy\"]; this file holds \(json.typeName)")
        }
        return try items.enumerated().map { (offset, item) throws(CountriesError) in
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
    }

    /// Where the JSON is wrong and how, as an editor would find it.
    private static func describe(_ error: JSONParser.LocatedFailure) -> String {
        let place = "line \(error.line), column \(error.column)"
        switch error.failure {
        case .duplicateKey(let key):
            return "\(place): the key \(CountryName.quoted(key)) is given twice in one object"
        case .tooDeep:
            return "\(place): arrays or objects nest more than \(Limits.maximumNesting) levels deep"
        case .notJSON where error.atEnd:
            return "line \(error.line): the file ends before the JSON does (an unclosed [, { or string?)"
        case .notJSON:
            return "\(place): not valid JSON (a comma before ] or }, a missing comma or quote?)"
        }
    }

    private static func textEntries(_ contents: Data) throws(CountriesError) -> [(
        label: String, country: Country
    )] {
        guard let text = String(data: contents, encoding: .utf8) else {
            throw CountriesError(.badRequest, "the seed file is neither a JSON array nor UTF-8 text")
        }
        // By Character, "\r\n" is one newline, not "\r" then "\n": split on any newline.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        var entries: [(label: String, country: Country)] = []
        for (offset, rawLine) in lines.enumerated() {
            let line = String(rawLine).trimmingWhitespace()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let label = "line \(offset + 1)"
            if let first = line.first, "[]{}\"".contains(first) {
                throw CountriesError(
                    .badRequest,
                    "\(label): \(CountryName.quoted(line)) looks like JSON, but the file is read as one name per line because its first character is not [; write names without brackets or quotes, or make the whole file one JSON array"
                )
            }
            entries.append((label, Country(name: line)))
        }
        return entries
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
