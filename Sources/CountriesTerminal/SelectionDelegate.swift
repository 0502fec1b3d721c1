import CountriesCore

/// What a key asks for, in `select`.
public enum Intent: Equatable, Sendable {
    /// Move the cursor to a row (already clamped to the rows).
    case moveCursor(to: Int)
    /// Toggle this country: the loop sends `toggle` for it (the seed's `didSelectRowAt`).
    case toggle(IndexedCountry)
    /// Leave.
    case quit
}

/// The table's delegate (the seed's `CountriesTableViewDelegate`, as a value): it holds the cursor
/// and turns keys into intents. It never sends anything itself; the loop acts on the intent and
/// tells the person the result through ``SelectionStatus``.
///
/// Keys: `j`/Down and `k`/Up move one row; Page Down/Page Up move one page (the body height);
/// Home/`g` and End/`G` go to the first and last rows; Space and Enter toggle the row under the
/// cursor (only a live row: on a skeleton row they do nothing); `q`, Ctrl-C and Escape quit.
public struct SelectionDelegate: Equatable, Sendable {
    /// The row under the cursor.
    public private(set) var cursor: Int

    /// Creates a delegate with the cursor on `cursor`.
    public init(cursor: Int = 0) {
        self.cursor = max(0, cursor)
    }

    /// The intent of `key` over the rows of `dataSource`, with `pageSize` rows to a page; nil
    /// when the key means nothing here. Moves the cursor for movement keys.
    public mutating func handle(_ key: Key, in dataSource: some TableDataSource, pageSize: Int) -> Intent? {
        let count = dataSource.numberOfRows
        let page = max(1, pageSize)
        switch key {
        case .up, .char("k"): return move(to: cursor - 1, count: count)
        case .down, .char("j"): return move(to: cursor + 1, count: count)
        case .pageUp: return move(to: cursor - page, count: count)
        case .pageDown: return move(to: cursor + page, count: count)
        case .home, .char("g"): return move(to: 0, count: count)
        case .end, .char("G"): return move(to: count - 1, count: count)
        case .space, .enter:
            guard (0..<count).contains(cursor), let country = dataSource.row(at: cursor).country else {
                return nil
            }
            return .toggle(country)
        case .char("q"), .char("Q"), .ctrlC, .escape:
            return .quit
        default:
            return nil
        }
    }

    /// Keeps the cursor on the same country (by name) when rows move because a country was added
    /// or removed. When that country is gone, the cursor stays at its position, clamped to the new
    /// rows: it lands on the country that moved up into its place.
    public mutating func rowsMoved(from old: CountriesState, to new: CountriesState) {
        if old.countries.indices.contains(cursor), let index = new.index(named: old.countries[cursor].name) {
            cursor = index
        } else {
            clamp(rowCount: new.count)
        }
    }

    /// Keeps the cursor inside `0..<rowCount` (at 0 when there are no rows), e.g. after the data
    /// source was swapped.
    public mutating func clamp(rowCount: Int) {
        cursor = Self.clamped(cursor, count: rowCount)
    }

    private mutating func move(to target: Int, count: Int) -> Intent {
        cursor = Self.clamped(target, count: count)
        return .moveCursor(to: cursor)
    }

    private static func clamped(_ index: Int, count: Int) -> Int {
        min(max(0, index), max(0, count - 1))
    }
}

/// The status line of `select` (the seed's interaction delegate, `didSelectCountry`), as pure
/// functions of the toggle's outcome.
public enum SelectionStatus {
    /// `Selected country: France (now visited)` or `Selected country: France (now not visited)`.
    public static func describe(country: IndexedCountry) -> String {
        "Selected country: \(country.name) (now \(country.visited ? "visited" : "not visited"))"
    }

    /// The status for a reply to `toggle`: the selected country, or the service's error message.
    /// Returns the text and whether it is an error.
    public static func describe(reply: Reply) -> (text: String, isError: Bool) {
        if let failure = reply.failure { return (failure.message, true) }
        guard let country = reply.country else {
            return ("the service's reply named no country", true)
        }
        return (describe(country: country), false)
    }

    /// The status for a toggle of `name` that got no reply: "France was not toggled: ..." when
    /// nothing changed, and, when it may have been applied (which "was not toggled" would
    /// deny), what the screen itself will show first (the row changes if the toggle was made),
    /// then `cause`, what the last try got. The client's whole message for that case is advice
    /// for a shell (a request id to send again with `--id`) and is left out: the table is the
    /// answer here.
    public static func describe(
        failedToggleOf name: String, message: String, outcomeUnknown: Bool, cause: String? = nil
    ) -> String {
        guard outcomeUnknown else { return "\(name) was not toggled: \(message)" }
        return "\(name): outcome unknown; if the toggle was made, its row will change"
            + (cause.map { " (\($0))" } ?? "")
    }

    /// The status once an event settles what a toggle of `name` with an unknown outcome left:
    /// the row as the event shows it (the event may be that toggle or another client's change;
    /// either way it is what the service now has), or nil when the event is not about `name`.
    public static func describe(settling name: String, by event: Event) -> String? {
        switch event.kind {
        case .changed(let row) where row.name == name, .added(let row) where row.name == name:
            return "\(name) is now \(row.visited ? "visited" : "not visited") (seq \(event.seq))"
        case .removed(let row) where row.name == name:
            return "\(name) was removed (seq \(event.seq))"
        case .reset(let rows):
            guard let row = rows.first(where: { $0.name == name }) else {
                return "\(name) is gone: the list was reset (seq \(event.seq))"
            }
            return "\(name) is now \(row.visited ? "visited" : "not visited") (seq \(event.seq), a reset)"
        default:
            return nil
        }
    }

    /// The status for a toggle's outcome: the selected country, or the error's message.
    public static func describe(_ result: Result<IndexedCountry, CountriesError>) -> (
        text: String, isError: Bool
    ) {
        switch result {
        case .success(let country): return (describe(country: country), false)
        case .failure(let error): return (error.message, true)
        }
    }
}
