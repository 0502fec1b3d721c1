import CountriesCore

/// One row as the table shows it: what a cell of the seed's table view displays.
public struct TableRow: Equatable, Sendable {
    /// The row's index as text (`"12"`), or empty for a placeholder.
    public var indexText: String
    /// The country's name, or a run of placeholder characters.
    public var name: String
    /// The visited mark (`✓`, `[x]`), the unvisited mark, or a placeholder of the same width.
    public var mark: String
    /// Whether this is a skeleton row standing in for data that is not there.
    public var isPlaceholder: Bool
    /// The country this row shows, with its index; nil for a placeholder.
    public var country: IndexedCountry?

    /// Creates a row.
    public init(
        indexText: String, name: String, mark: String, isPlaceholder: Bool, country: IndexedCountry? = nil
    ) {
        self.indexText = indexText
        self.name = name
        self.mark = mark
        self.isPlaceholder = isPlaceholder
        self.country = country
    }
}

/// The rows a table shows (the seed's `UITableViewDataSource`, as a value).
///
/// `row(at:)` is called only with indexes in `0..<numberOfRows`.
public protocol TableDataSource: Sendable {
    /// How many rows there are.
    var numberOfRows: Int { get }
    /// The row at `index`, which is in `0..<numberOfRows`.
    func row(at index: Int) -> TableRow
}

/// Rows from a live copy of the state: one per country, in order.
public struct LiveDataSource: TableDataSource, Equatable {
    /// The state the rows come from.
    public var state: CountriesState
    /// The marks to draw.
    public var glyphs: Glyphs

    /// Creates a data source over `state`.
    public init(state: CountriesState, glyphs: Glyphs = .unicode) {
        self.state = state
        self.glyphs = glyphs
    }

    /// The number of countries.
    public var numberOfRows: Int { state.count }

    /// The country at `index` with its mark.
    public func row(at index: Int) -> TableRow {
        let country = state.countries[index]
        return TableRow(
            indexText: String(index), name: country.name,
            mark: country.visited ? glyphs.visited : glyphs.unvisited,
            isPlaceholder: false, country: IndexedCountry(country, at: index))
    }
}

/// Placeholder rows that stand in while there is no live data (seed 002's skeleton).
///
/// The rows hold no names and no marks, only runs of ``Glyphs/placeholderFill`` of varied
/// widths, so nothing on screen can pass for data.
public struct SkeletonDataSource: TableDataSource, Equatable {
    /// How many placeholder rows to show.
    public var numberOfRows: Int
    /// The fill character and mark width come from here.
    public var glyphs: Glyphs

    /// The widths the placeholder names cycle through: varied, like real names.
    static let widths = [10, 7, 13, 9, 6, 12, 8, 11, 14, 7, 10, 5]

    /// Creates a skeleton of `rows` rows (20, as in the seed, unless told).
    public init(rows: Int = 20, glyphs: Glyphs = .unicode) {
        self.numberOfRows = max(0, rows)
        self.glyphs = glyphs
    }

    /// A placeholder row.
    public func row(at index: Int) -> TableRow {
        let width = Self.widths[index % Self.widths.count]
        let markWidth = DisplayWidth.of(glyphs.visited)
        return TableRow(
            indexText: "", name: String(repeating: glyphs.placeholderFill, count: width),
            mark: String(repeating: " ", count: markWidth), isPlaceholder: true)
    }
}
