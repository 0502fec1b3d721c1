import Foundation
import JSON

/// A reply of protocol v1: `{"ok": true, ...}` with the op's fields, or
/// `{"ok": false, "error": {"code", "message"}}`.
///
/// One type for every op keeps the wire format in one place; fields an op does not use are
/// left out of the JSON.
public struct Reply: Equatable, Sendable {
    /// The error object of a failed reply.
    public struct ErrorBody: Equatable, Sendable {
        /// The protocol error code, e.g. `not_found`.
        public var code: String
        /// A message a person can act on.
        public var message: String

        /// Creates an error body.
        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// Whether the request succeeded.
    public var ok: Bool
    /// The seq the reply describes: the event a change caused, or the state a read saw.
    public var seq: UInt64?
    /// The country a `get`, `toggle`, `set`, `add` or `remove` is about.
    public var country: IndexedCountry?
    /// The whole list, for `list` and `reset`.
    public var countries: [IndexedCountry]?
    /// The number of countries, for `count` and `status`.
    public var count: Int?
    /// The events after `since`, for `history`: at most one page (``Limits/historyPageEvents``).
    public var events: [Event]?
    /// True on a `history` page that stops before the current seq: ask again with `since` set
    /// to the last event's seq. Absent otherwise.
    public var more: Bool?
    /// The failure, when `ok` is false.
    public var error: ErrorBody?
    /// The identity of the store the reply describes (v1.1), in replies to reads and `status`:
    /// a seq means something only within one store.
    public var store: String?

    /// What `status` reports about the service, its fields beside these on the wire; nil in
    /// replies to other ops.
    public var status: ServiceStatus? {
        get {
            guard case .value(let status)? = statusStorage else { return nil }
            return status
        }
        set { statusStorage = newValue.map(OutOfLine.value) }
    }

    /// `status`, kept out of line: a reply to any other op stays small, and checking it for a
    /// status copies a pointer, not ten fields (measured: 5% of encoding a toggle's reply).
    private var statusStorage: OutOfLine<ServiceStatus>?

    /// Whether the reply has a `status`, without copying it.
    var hasStatus: Bool { statusStorage != nil }

    /// Creates a success reply with the given fields.
    public init(
        seq: UInt64? = nil, country: IndexedCountry? = nil, countries: [IndexedCountry]? = nil,
        count: Int? = nil, events: [Event]? = nil
    ) {
        self.ok = true
        self.seq = seq
        self.country = country
        self.countries = countries
        self.count = count
        self.events = events
    }

    /// The reply to the change that made `event`: its seq, and the row it touched (the rows,
    /// for a reset). One definition, so a store can make a reset's reply again from its event
    /// rather than keep the list twice.
    public init(answering event: Event) {
        // Each field given to the one initializer: made first and then assigned a field, the
        // reply was copied whole twice.
        switch event.kind {
        case .changed(let row), .added(let row), .removed(let row): self.init(seq: event.seq, country: row)
        case .reset(let rows): self.init(seq: event.seq, countries: rows)
        }
    }

    /// Creates a failure reply.
    public init(error: CountriesError) {
        self.ok = false
        self.error = ErrorBody(code: error.code.rawValue, message: error.message)
    }

    /// The failure as a typed error, when this is an error reply with a known code.
    public var failure: CountriesError? {
        guard !ok else { return nil }
        let body =
            error ?? ErrorBody(code: "bad_request", message: "the service sent an error without details")
        return CountriesError(CountriesError.Code(rawValue: body.code) ?? .badRequest, body.message)
    }
}

extension Reply {
    /// The largest reply a service sends, with room to spare: a `list` or `reset` of the largest
    /// list holds the rows of the largest reset event (``EventShape/maximumBodyBytes``, about
    /// 16 MB), and a `history` page at most one such event beyond 64 KiB. Clients take no larger
    /// frame: a parsed reply takes up to 15 times its bytes.
    public static let maximumBytes = EventShape.maximumBodyBytes + (256 << 10)

    /// The field a success answering `command` must have and this reply lacks (docs/PROTOCOL.md,
    /// "Commands": `seq` always, and the op's own: `countries`, `country`, `count`, `events` or
    /// the status), or nil. A success without it is not an answer to the request (a broken or
    /// hostile peer on the endpoint): `countries count` printed 0 for `{"ok":true}`, and a toggle
    /// so answered said nothing of its outcome. Clients take such a reply as one that is not the
    /// protocol's.
    public func missingField(answering command: Command) -> String? {
        guard ok else { return nil }
        guard seq != nil else { return "seq" }
        switch command {
        case .query(.list), .change(.reset): return countries == nil ? "countries" : nil
        case .query(.get), .change(.toggle), .change(.set), .change(.add), .change(.remove):
            return country == nil ? "country" : nil
        case .query(.count): return count == nil ? "count" : nil
        case .history: return events == nil ? "events" : nil
        case .status: return nil
        }
    }
}

extension Reply {
    /// Why this reply cannot be the answer to `request`, or nil: a refusal without a known error
    /// code, or a success where a field it must have is missing (``missingField(answering:)``), or
    /// it contradicts what was asked: another row than the one named, another `visited` than `set`
    /// asked, a seq that `if_seq` rules out, another store than `if_store` named. A hostile or
    /// broken peer's `Italy: visited` answering `toggle France` was printed as France's outcome,
    /// exit 0. Clients take such a reply as one that is not the protocol's: a change's outcome
    /// stays unknown.
    public func contradiction(answering request: Request) -> String? {
        guard ok else {
            // A refusal says what it is: one without a code the protocol knows says nothing of
            // whether a change was made (it was taken for a definite `bad_request`).
            guard let error, CountriesError.Code(rawValue: error.code) != nil else {
                return "refuses without an error code the protocol knows"
            }
            return nil
        }
        if let field = missingField(answering: request.command) { return "says ok but has no \"\(field)\"" }
        if let wanted = request.ifStore, let store, store != wanted {
            return
                "names store \(VisibleText.escaped(store)), not \(VisibleText.escaped(wanted)) as if_store asked"
        }
        let row = country
        if let row, let target = request.command.target, !Self.row(row, isNamedBy: target) {
            return "is about \(CountryName.quoted(row.name)) (row \(row.index)), not \(target)"
        }
        switch request.command {
        case .change(.set(_, let visited, _)):
            if let row, row.visited != visited {
                return
                    "says \(CountryName.quoted(row.name)) is \(row.visited ? "" : "not ")visited, not as set asked"
            }
        case .change(.add(let name, let visited)):
            if let row, !Self.row(row, isNamedBy: .name(name)) || row.visited != visited {
                return
                    "is about \(CountryName.quoted(row.name)) (visited \(row.visited)), not the \(CountryName.quoted(name)) added"
            }
        default:
            break
        }
        // A change made at if_seq is seq if_seq + 1; a set that changed nothing answers if_seq.
        switch request.command {
        case .change(.toggle(_, let ifSeq?)) where seq != ifSeq &+ 1,
            .change(.set(_, _, let ifSeq?)) where seq != ifSeq && seq != ifSeq &+ 1:
            return "is at seq \(seq.map(String.init) ?? "none"), which if_seq \(ifSeq) rules out"
        default:
            return nil
        }
    }

    /// Whether `row` is the one `target` names: its index, or its name as the service matches
    /// names (folded).
    private static func row(_ row: IndexedCountry, isNamedBy target: CountryReference) -> Bool {
        switch target {
        case .index(let index): row.index == index
        case .name(let name): CountryName.matches(row.name, name)
        }
    }
}

/// A value behind a pointer.
private indirect enum OutOfLine<Value: Equatable & Sendable>: Equatable, Sendable {
    case value(Value)
}

extension Reply {
    /// The reply as one UTF-8 JSON frame, as `Output` (`Data` unless asked otherwise: the service
    /// asks for `[UInt8]`, one allocation). Inlinable, as ``JSONWriter/encode(_:capacity:as:_:)``.
    @inlinable
    public func encoded<Output: JSONOutput>(as output: Output.Type = Data.self) -> Output {
        // Room for a change's reply (about 110 bytes with its store) without growing.
        JSONWriter.encode(
            self, capacity: 160 + 48 * (countries?.count ?? 0) + 80 * (events?.count ?? 0), as: output
        ) {
            $0.reply($1)
        }
    }

    /// Decodes a reply frame; throws a `WireDecodingError` when it is not one.
    public static func decode(_ data: Data) throws -> Reply {
        try WireDecoding.reply(try WireDecoding.parse(data))
    }
}

extension Event {
    /// The event as the JSON frame that follows its topic on the PUB channel, as `Output`
    /// (`Data` unless asked otherwise: the service asks for `[UInt8]`, one allocation).
    @inlinable
    public func encoded<Output: JSONOutput>(as output: Output.Type = Data.self) -> Output {
        // Room for a one-row event (about 130 bytes with its store and topic) without growing.
        JSONWriter.encode(
            self, capacity: country == nil ? 128 + 48 * (resetRows?.count ?? 0) : 192, as: output
        ) {
            $0.event($1)
        }
    }

    @usableFromInline var resetRows: [IndexedCountry]? {
        if case .reset(let rows) = kind { return rows }
        return nil
    }

    /// Decodes an event frame; throws a `WireDecodingError` when it is not one.
    public static func decode(_ data: Data) throws -> Event {
        try WireDecoding.event(try WireDecoding.parse(data))
    }
}

extension Heartbeat {
    /// The heartbeat as a JSON frame, as `Output` (`Data` unless asked otherwise).
    @inlinable
    public func encoded<Output: JSONOutput>(as output: Output.Type = Data.self) -> Output {
        JSONWriter.encode(self, capacity: 48, as: output) { $0.heartbeat($1) }
    }

    /// Decodes a heartbeat frame; throws a `WireDecodingError` when it is not one.
    public static func decode(_ data: Data) throws -> Heartbeat {
        try WireDecoding.heartbeat(try WireDecoding.parse(data))
    }
}

extension CountriesState {
    /// The whole list as one JSON object, keys sorted: `{"countries":[...],"seq":S,"store":ID}`
    /// (`store`, the store's identity, only when known). What `countries watch --json` prints
    /// per change: a `list` reply's members without `ok`.
    public func snapshotJSON(store: String?) -> Data {
        var writer = JSONWriter(capacity: 48 + 48 * count)
        writer.snapshot(self, store: store)
        return writer.finish()
    }
}
