import Foundation

/// A reply of protocol v1: `{"ok": true, ...}` with the op's fields, or
/// `{"ok": false, "error": {"code", "message"}}`.
///
/// One type for every op keeps the wire format in one place; fields an op does not use are
/// left out of the JSON.
public struct Reply: Equatable, Sendable, Codable {
    /// The error object of a failed reply.
    public struct ErrorBody: Equatable, Sendable, Codable {
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

    // `status` fields, for operators.
    /// The service's version.
    public var version: String?
    /// Seconds since the service started.
    public var uptimeSeconds: Double?
    /// How many countries are visited.
    public var visited: Int?
    /// Commands answered successfully since start.
    public var commandsServed: Int?
    /// Commands refused (error replies) since start.
    public var commandsRefused: Int?
    /// Where the state is stored (a path, or `:memory:`).
    public var storePath: String?
    /// Size of the store on disk, in bytes.
    public var storeBytes: Int?
    /// The oldest seq `history` can still return events after.
    public var historyFrom: UInt64?
    /// The command and event endpoints the service is bound to.
    public var endpoints: [String]?
    /// Connections on the event endpoint (subscribers, or relays).
    public var subscribers: Int?

    private enum CodingKeys: String, CodingKey {
        case ok, seq, country, countries, count, events, more, error, version
        case uptimeSeconds = "uptime_seconds"
        case visited
        case commandsServed = "commands_served"
        case commandsRefused = "commands_refused"
        case store
        case storePath = "store_path"
        case storeBytes = "store_bytes"
        case historyFrom = "history_from"
        case endpoints, subscribers
    }

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
    /// The reply as one UTF-8 JSON frame.
    public func encoded() -> Data {
        guard hasStatusFields else {
            var writer = JSONWriter(capacity: 64 + 48 * (countries?.count ?? 0) + 80 * (events?.count ?? 0))
            writer.reply(self)
            return writer.data
        }
        return encodedWithJSONEncoder()
    }

    /// The reply through `JSONEncoder`: the reference ``JSONWriter`` is tested against, and the
    /// way `status` replies (rare, with a `Double`) are written.
    func encodedWithJSONEncoder() -> Data {
        // Encoding a struct of strings, numbers and arrays cannot fail.
        (try? WireJSON.encoder.encode(self)) ?? Data(#"{"ok":false}"#.utf8)
    }

    /// Whether any field only `status` sets is present.
    var hasStatusFields: Bool {
        version != nil || uptimeSeconds != nil || visited != nil || commandsServed != nil
            || commandsRefused != nil || storePath != nil || storeBytes != nil || historyFrom != nil
            || endpoints != nil || subscribers != nil
    }

    /// Decodes a reply frame; throws a `DecodingError` when it is not one.
    public static func decode(_ data: Data) throws -> Reply {
        if let reply = try WireDecoding.reply(try WireDecoding.parse(data)) { return reply }
        return try WireJSON.decoder.decode(Reply.self, from: data)
    }
}

extension Event {
    /// The event as the JSON frame that follows its topic on the PUB channel.
    public func encoded() -> Data {
        var writer = JSONWriter(capacity: country == nil ? 64 + 48 * (resetRows?.count ?? 0) : 96)
        writer.event(self)
        return writer.data
    }

    /// The event through `JSONEncoder`, the reference ``JSONWriter`` is tested against.
    func encodedWithJSONEncoder() -> Data {
        (try? WireJSON.encoder.encode(self)) ?? Data()
    }

    private var resetRows: [IndexedCountry]? {
        if case .reset(let rows) = kind { return rows }
        return nil
    }

    /// Decodes an event frame; throws a `DecodingError` when it is not one.
    public static func decode(_ data: Data) throws -> Event {
        try WireDecoding.event(try WireDecoding.parse(data))
    }
}

extension Heartbeat {
    /// The heartbeat as a JSON frame.
    public func encoded() -> Data {
        var writer = JSONWriter(capacity: 48)
        writer.raw(#"{"seq":"#)
        writer.unsigned(seq)
        if let store {
            writer.raw(#","store":"#)
            writer.string(store)
        }
        writer.raw(#","topic":"#)
        writer.string(topic.rawValue)
        writer.raw("}")
        return writer.data
    }

    /// Decodes a heartbeat frame.
    public static func decode(_ data: Data) throws -> Heartbeat {
        try WireJSON.decoder.decode(Heartbeat.self, from: data)
    }
}

/// The JSON settings every frame uses, so encoders agree across the project.
enum WireJSON {
    // JSONEncoder and JSONDecoder are safe to share once configured, and costly to make per frame.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    static let decoder = JSONDecoder()
}
