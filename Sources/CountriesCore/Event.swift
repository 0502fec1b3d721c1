/// The topic frame of an event on the PUB channel.
public enum Topic: String, Equatable, Hashable, Sendable, CaseIterable {
    /// A country's `visited` flag changed.
    case countryChanged = "country.changed"
    /// A country was appended.
    case countryAdded = "country.added"
    /// A country was removed; later rows moved up one.
    case countryRemoved = "country.removed"
    /// The list was replaced by the seed list.
    case countriesReset = "countries.reset"
    /// The service is alive; carries the current seq.
    case heartbeat = "heartbeat"
}

/// One change to the list, numbered by `seq`, as published and as kept for `history`.
///
/// Each event carries the rows it is about, so a subscriber applies it without asking back.
public struct Event: Equatable, Hashable, Sendable {
    /// What changed.
    public enum Kind: Equatable, Hashable, Sendable {
        /// `visited` changed; the row as it is now.
        case changed(IndexedCountry)
        /// A row was appended; the row as added.
        case added(IndexedCountry)
        /// A row was removed; the row as it was.
        case removed(IndexedCountry)
        /// The whole list was replaced.
        case reset([IndexedCountry])
    }

    /// The seq of this change: one more than the one before it, never reused.
    public var seq: UInt64
    /// What changed.
    public var kind: Kind
    /// The identity of the store the change was made in (protocol v1.1): a seq means something
    /// only within one store. Nil in events of services older than v1.1.
    public var store: String?

    /// Creates an event.
    public init(seq: UInt64, kind: Kind, store: String? = nil) {
        self.seq = seq
        self.kind = kind
        self.store = store
    }

    /// The topic this event is published under.
    public var topic: Topic {
        switch kind {
        case .changed: return .countryChanged
        case .added: return .countryAdded
        case .removed: return .countryRemoved
        case .reset: return .countriesReset
        }
    }

    /// The single row the event is about, or nil for a reset.
    public var country: IndexedCountry? {
        switch kind {
        case .changed(let row), .added(let row), .removed(let row): return row
        case .reset: return nil
        }
    }
}

/// The once-a-second sign of life on the PUB channel, with the current seq and store.
public struct Heartbeat: Equatable, Hashable, Sendable {
    /// Always ``Topic/heartbeat``; kept in the body so one line stands on its own.
    public var topic: Topic = .heartbeat
    /// The service's current seq.
    public var seq: UInt64
    /// The identity of the service's store (v1.1); nil from older services.
    public var store: String?

    /// Creates a heartbeat for the current seq of `store`.
    public init(seq: UInt64, store: String? = nil) {
        self.seq = seq
        self.store = store
    }
}

extension Event {
    /// Throws `invalid_name` when a row of the event holds a name the service could not have
    /// stored: one that ``CountryName/validate(_:)`` refuses or would change (trimming). Such an
    /// event is a protocol violation (a forged or corrupted publication): a subscriber drops it
    /// and catches up as after a gap (docs/PROTOCOL.md, "Staying in sync").
    ///
    /// The message names the event and the name, escaped (``CountryName/quoted(_:)``).
    public func validateNames() throws(CountriesError) {
        let rows: [IndexedCountry]
        switch kind {
        case .changed(let row), .added(let row), .removed(let row): rows = [row]
        case .reset(let all): rows = all
        }
        for row in rows {
            let why: String
            do {
                if try CountryName.validate(row.name) == row.name { continue }
                why = "a country name must not start or end with white space"
            } catch {
                why = error.message
            }
            throw CountriesError(
                .invalidName,
                "event \(seq) (\(topic.rawValue)) names \(CountryName.quoted(row.name)), which breaks the name rules: \(why)"
            )
        }
    }
}

extension Event {
    /// About the bytes the event takes encoded, in a reply or a commit, without encoding it: a
    /// row (``estimatedRowBytes(name:)``) and about 40 bytes around it, or a reset's rows.
    public var estimatedBytes: Int {
        switch kind {
        case .changed(let row), .added(let row), .removed(let row):
            return 40 + Self.estimatedRowBytes(name: row.name)
        case .reset(let rows):
            return rows.reduce(48) { $0 + Self.estimatedRowBytes(name: $1.name) }
        }
    }

    /// About the bytes a row named `name` takes encoded, in an event or a `list` reply: its name
    /// and about 40 bytes of JSON around it.
    public static func estimatedRowBytes(name: String) -> Int { 40 + name.utf8.count }
}
