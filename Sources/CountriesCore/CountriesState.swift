/// The state controller: the one list of countries and its seq, changed only through
/// ``apply(_:seed:)`` (or, on a replica, ``replay(_:)``).
///
/// A plain value, testable without sockets, files or terminals. The service owns one; every
/// subscriber keeps a replica that it updates from events. Where the seed's controller called
/// `fatalError`, this one throws a ``CountriesError`` that says what was wrong.
public struct CountriesState: Equatable, Sendable {
    /// The countries, in order.
    public private(set) var countries: [Country]
    /// The seq of the last change applied: it goes up by exactly one per change.
    public private(set) var seq: UInt64
    /// `CountryName.foldedKey` of each row, kept beside `countries` so a lookup by name does not
    /// lower-case the whole list every time.
    private var keys: FoldedKeys

    /// Creates a state at `seq` holding `countries` (assumed valid: see ``SeedList``).
    public init(countries: [Country], seq: UInt64 = 0) {
        self.countries = countries
        self.seq = seq
        self.keys = FoldedKeys(countries.lazy.map(\.name))
    }

    /// Creates a state from rows as the protocol sends them (a `list` reply or a reset event).
    public init(rows: [IndexedCountry], seq: UInt64) {
        self.init(countries: rows.map(\.country), seq: seq)
    }
}

// MARK: - Reading

extension CountriesState {
    /// How many countries there are (the seed's `numberOfCountries()`).
    public var count: Int { countries.count }

    /// About the bytes a copy of the state takes: its rows and their folded keys (the names'
    /// own storage is shared between copies). A state kept after each change is one such copy.
    public var copyBytes: Int {
        count * (MemoryLayout<Country>.stride + MemoryLayout<String>.stride + MemoryLayout<Int>.stride)
    }

    /// How many countries are visited.
    public var visitedCount: Int { countries.reduce(0) { $0 + ($1.visited ? 1 : 0) } }

    /// Every row with its index, as `list` sends it.
    public var rows: [IndexedCountry] {
        countries.enumerated().map { IndexedCountry($0.element, at: $0.offset) }
    }

    /// The country at `index` (the seed's `countryAt(index:)`), or `index_out_of_range`.
    public func country(at index: Int) throws(CountriesError) -> Country {
        guard countries.indices.contains(index) else {
            throw .indexOutOfRange(index, count: countries.count)
        }
        return countries[index]
    }

    /// The index of the country with this name (case-insensitive, exact), if there is one.
    public func index(named name: String) -> Int? {
        let key = CountryName.foldedKey(name)
        return keys.firstIndex(of: key)
    }

    /// The index a reference points at, or `index_out_of_range` / `not_found`.
    public func index(of reference: CountryReference) throws(CountriesError) -> Int {
        switch reference {
        case .index(let index):
            guard countries.indices.contains(index) else {
                throw .indexOutOfRange(index, count: countries.count)
            }
            return index
        case .name(let name):
            guard let index = index(named: name) else { throw .notFound(name) }
            return index
        }
    }

    /// The row a reference points at, with its index.
    public func row(_ reference: CountryReference) throws(CountriesError) -> IndexedCountry {
        let index = try index(of: reference)
        return IndexedCountry(countries[index], at: index)
    }

    /// Answers a read. Reads never change the state.
    public func answer(_ query: Query) throws(CountriesError) -> Reply {
        switch query {
        case .list:
            return Reply(seq: seq, countries: rows)
        case .get(let reference):
            return Reply(seq: seq, country: try row(reference))
        case .count:
            return Reply(seq: seq, count: count)
        }
    }
}

// MARK: - Changing

/// What a change did: the reply to send and, when something changed, the event to publish.
public struct ChangeResult: Equatable, Sendable {
    /// The success reply, whose `seq` is the event's (or the current seq when nothing changed).
    public var reply: Reply
    /// The event the change caused; nil when it changed nothing (a `set` to the current value).
    public var event: Event?
}

extension CountriesState {
    /// Applies a change, the one way the list changes: the seed's `toggleVisitedCountry(at:)`
    /// and its siblings, with refusals as typed errors instead of `fatalError`.
    ///
    /// On error the state is untouched. `seed` is the list a `reset` puts back.
    public mutating func apply(_ change: Change, seed: [Country]) throws(CountriesError) -> ChangeResult {
        switch change {
        case .toggle(let reference, let ifSeq):
            try check(ifSeq)
            let index = try index(of: reference)
            countries[index].visited.toggle()
            return commit(.changed(IndexedCountry(countries[index], at: index)))

        case .set(let reference, let visited, let ifSeq):
            try check(ifSeq)
            let index = try index(of: reference)
            guard countries[index].visited != visited else {
                return ChangeResult(
                    reply: Reply(seq: seq, country: IndexedCountry(countries[index], at: index)))
            }
            countries[index].visited = visited
            return commit(.changed(IndexedCountry(countries[index], at: index)))

        case .add(let rawName, let visited):
            let name = try CountryName.validate(rawName)
            let key = CountryName.foldedKey(name)
            if let existing = keys.firstIndex(of: key) {
                throw CountriesError(
                    .duplicate, "\"\(countries[existing].name)\" is already in the list, at index \(existing)"
                )
            }
            guard countries.count < Limits.maximumCountries else {
                throw CountriesError(
                    .tooLarge, "the list is full: it may hold at most \(Limits.maximumCountries) countries")
            }
            countries.append(Country(name: name, visited: visited))
            keys.append(key)
            return commit(.added(IndexedCountry(countries[countries.count - 1], at: countries.count - 1)))

        case .remove(let reference):
            let index = try index(of: reference)
            let removed = IndexedCountry(countries.remove(at: index), at: index)
            keys.remove(at: index)
            return commit(.removed(removed))

        case .reset:
            self = CountriesState(countries: seed, seq: seq)
            return commit(.reset(rows))
        }
    }

    private func check(_ ifSeq: UInt64?) throws(CountriesError) {
        if let ifSeq, ifSeq != seq {
            throw .conflict(expected: ifSeq, current: seq)
        }
    }

    private mutating func commit(_ kind: Event.Kind) -> ChangeResult {
        seq += 1
        let event = Event(seq: seq, kind: kind)
        return ChangeResult(reply: Reply(answering: event), event: event)
    }
}

// MARK: - Following a copy

extension CountriesState {
    /// Makes this state equal to `newer`, which was this state with `events` (its next events,
    /// in order) applied, by applying them here as well.
    ///
    /// What it is for: two states that share a list's storage copy the whole list on the next
    /// change to either (copy-on-write), about 100 instructions a row. A service that commits
    /// a batch staged on a copy of its state follows the copy this way instead of taking it, so
    /// the next batch stages on storage of its own, at a cost per change and not per row.
    ///
    /// An event that does not fit (a row that is not where it says, a gap in seqs), or an
    /// outcome of another seq or length than `newer`'s, makes this state `newer` itself: the
    /// value is always right, only the copy is saved.
    public mutating func follow(_ newer: CountriesState, through events: [Event]) {
        do {
            for event in events { try replay(event) }
        } catch {
            self = newer
            return
        }
        if seq != newer.seq || countries.count != newer.countries.count { self = newer }
    }
}

// MARK: - Replicas

/// Why a replica could not apply an event: it must catch up instead.
public enum ReplayError: Error, Equatable, Sendable {
    /// The event is not the next one: events were missed (or the service's seq went back).
    case gap(expected: UInt64, received: UInt64)
    /// The event does not fit the replica (a row that is not where the event says it is).
    case mismatch(String)
}

extension CountriesState {
    /// Applies an event received from the service to this replica.
    ///
    /// The event must be the next one (`seq + 1`); anything else is a ``ReplayError`` and the
    /// replica is left as it was, so the caller can catch up with `history` or `list`.
    public mutating func replay(_ event: Event) throws(ReplayError) {
        guard seq < .max else {
            throw .mismatch("the replica is at seq \(seq), the largest there is: no event can follow it")
        }
        guard event.seq == seq + 1 else { throw .gap(expected: seq + 1, received: event.seq) }
        switch event.kind {
        case .changed(let row):
            guard countries.indices.contains(row.index), fits(row) else {
                throw .mismatch("row \(row.index) is not \"\(row.name)\" here")
            }
            countries[row.index].visited = row.visited
        case .added(let row):
            guard row.index == countries.count else {
                throw .mismatch("an add at \(row.index) but the list has \(countries.count) rows")
            }
            // No service lists more; a replica that took every add a publisher sent grew without
            // end.
            guard countries.count < Limits.maximumCountries else {
                throw .mismatch("an add past \(Limits.maximumCountries) rows, the most a list has")
            }
            countries.append(row.country)
            keys.append(CountryName.foldedKey(row.name))
        case .removed(let row):
            guard countries.indices.contains(row.index), fits(row) else {
                throw .mismatch("row \(row.index) is not \"\(row.name)\" here")
            }
            countries.remove(at: row.index)
            keys.remove(at: row.index)
        case .reset(let rows):
            guard rows.count <= Limits.maximumCountries else {
                throw .mismatch(
                    "a reset to \(rows.count) rows, past \(Limits.maximumCountries), the most a list has")
            }
            self = CountriesState(rows: rows, seq: seq)
        }
        seq = event.seq
    }

    /// Whether the row at `row.index` is the one `row` names: the same folded key, as replay has
    /// always checked. The names are compared first: equal names fold alike, folding allocates,
    /// and a state following its own events (``follow(_:through:)``) always has the same name.
    private func fits(_ row: IndexedCountry) -> Bool {
        countries[row.index].name == row.name || keys[row.index] == CountryName.foldedKey(row.name)
    }
}
