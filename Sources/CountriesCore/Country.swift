/// One row of the list: a country and whether it has been visited.
///
/// A plain value, as in the seed's `Country`, but immutable from outside the state
/// controller so that a row can only change through a command.
public struct Country: Equatable, Hashable, Sendable {
    /// The display name, already validated and trimmed.
    public var name: String
    /// Whether the country has been visited (the seed's checkmark).
    public var visited: Bool

    /// Creates a row. The name is taken as given; validate user input with
    /// ``CountryName/validate(_:)``.
    public init(name: String, visited: Bool = false) {
        self.name = name
        self.visited = visited
    }
}

/// A country together with its position in the list, as the protocol sends it.
///
/// `index` is 0-based, like `indexPath.row` in the seed.
public struct IndexedCountry: Equatable, Hashable, Sendable {
    /// The 0-based position in the list.
    public var index: Int
    /// The display name.
    public var name: String
    /// Whether the country has been visited.
    public var visited: Bool

    /// Creates an indexed row.
    public init(index: Int, name: String, visited: Bool) {
        self.index = index
        self.name = name
        self.visited = visited
    }

    /// Creates an indexed row from a country and its position.
    public init(_ country: Country, at index: Int) {
        self.init(index: index, name: country.name, visited: country.visited)
    }

    /// The row without its position.
    public var country: Country { Country(name: name, visited: visited) }
}

/// How a request names a country: by position or by name.
public enum CountryReference: Equatable, Hashable, Sendable {
    /// A 0-based position in the list.
    case index(Int)
    /// A name, matched case-insensitively and exactly (after trimming).
    case name(String)
}

extension CountryReference: CustomStringConvertible {
    /// The reference as a person would write it: `3` or `"France"`.
    public var description: String {
        switch self {
        case .index(let index): return "\(index)"
        case .name(let name): return "\"\(name)\""
        }
    }
}
