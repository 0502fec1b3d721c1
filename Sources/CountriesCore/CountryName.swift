/// Validation of country names, shared by every way a name enters the list.
public enum CountryName {
    /// Returns the name trimmed of surrounding white space, or throws `invalid_name`.
    ///
    /// A valid name has 1 to ``Limits/maximumNameLength`` characters after trimming and no
    /// control characters (they would corrupt a terminal or a log line).
    public static func validate(_ raw: String) throws(CountriesError) -> String {
        let name = raw.trimmingWhitespace()
        if name.isEmpty {
            throw CountriesError(.invalidName, "a country name must not be empty")
        }
        if name.count > Limits.maximumNameLength {
            throw CountriesError(
                .invalidName,
                "a country name may have at most \(Limits.maximumNameLength) characters; this one has \(name.count)"
            )
        }
        // A character may carry any number of combining marks; cap the scalars too, so that
        // "100 characters" cannot hide tens of kilobytes.
        if name.unicodeScalars.count > Limits.maximumNameScalars {
            throw CountriesError(
                .invalidName,
                "a country name may have at most \(Limits.maximumNameScalars) Unicode scalars; this one has \(name.unicodeScalars.count)"
            )
        }
        if name.unicodeScalars.contains(where: isForbidden) {
            throw CountriesError(.invalidName, "a country name must not contain control characters")
        }
        return name
    }

    /// A name from a request or the wire, made safe to echo in a message: quoted, cut to 60
    /// scalars, and escaped as ``VisibleText`` escapes everything shown.
    public static func quoted(_ raw: String) -> String {
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: raw.unicodeScalars.prefix(60))
        var shown = VisibleText.escaped(String(cut))
        if raw.unicodeScalars.count > 60 { shown += "..." }
        return "\"" + shown + "\""
    }

    /// Whether two names denote the same country: case-insensitive, exact otherwise.
    public static func matches(_ lhs: String, _ rhs: String) -> Bool {
        lhs == rhs || foldedKey(lhs) == foldedKey(rhs)
    }

    /// The key under which names are compared (trimmed and lower-cased).
    public static func foldedKey(_ name: String) -> String {
        name.trimmingWhitespace().lowercased()
    }

    private static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned:
            return true
        case .format:
            // Bidirectional overrides can make a terminal show a name that is not the one stored.
            return (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        default:
            return false
        }
    }
}

extension String {
    /// The string without leading and trailing white space and newlines (no Foundation needed).
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace || $0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }),
            let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}
