import Foundation
import JSON

@testable import CountriesCore

// The reference the hand-written codec is tested against: `Codable` conformances as the wire
// types had them, run through `JSONEncoder` and `JSONDecoder` configured as the project was.
// Only tests use it; the keys are named here again on purpose, so that a key the codec gets
// wrong is caught rather than shared.

/// JSONEncoder and JSONDecoder with the settings every frame was written with.
enum WireJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    static let decoder = JSONDecoder()
}

/// A coding key named by its string.
private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension JSONValue: Decodable {
    /// JSONDecoder's view of a value: what requests were decoded with before ``JSONParser``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsigned(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

extension Topic: Codable {}

extension IndexedCountry: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        self.init(
            index: try container.decode(Int.self, forKey: Key("index")),
            name: try container.decode(String.self, forKey: Key("name")),
            visited: try container.decode(Bool.self, forKey: Key("visited")))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(index, forKey: Key("index"))
        try container.encode(name, forKey: Key("name"))
        try container.encode(visited, forKey: Key("visited"))
    }
}

extension Event: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let seq = try container.decode(UInt64.self, forKey: Key("seq"))
        let store = try container.decodeIfPresent(String.self, forKey: Key("store"))
        let kind: Kind
        switch try container.decode(Topic.self, forKey: Key("topic")) {
        case .countryChanged:
            kind = .changed(try container.decode(IndexedCountry.self, forKey: Key("country")))
        case .countryAdded: kind = .added(try container.decode(IndexedCountry.self, forKey: Key("country")))
        case .countryRemoved:
            kind = .removed(try container.decode(IndexedCountry.self, forKey: Key("country")))
        case .countriesReset:
            kind = .reset(try container.decode([IndexedCountry].self, forKey: Key("countries")))
        case .heartbeat:
            throw DecodingError.dataCorruptedError(
                forKey: Key("topic"), in: container, debugDescription: "a heartbeat is not a change event")
        }
        self.init(seq: seq, kind: kind, store: store)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(topic, forKey: Key("topic"))
        try container.encode(seq, forKey: Key("seq"))
        try container.encodeIfPresent(store, forKey: Key("store"))
        switch kind {
        case .changed(let row), .added(let row), .removed(let row):
            try container.encode(row, forKey: Key("country"))
        case .reset(let rows): try container.encode(rows, forKey: Key("countries"))
        }
    }

    /// The event through `JSONEncoder`.
    func encodedWithJSONEncoder() -> Data { (try? WireJSON.encoder.encode(self)) ?? Data() }
}

extension Heartbeat: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        self.init(
            seq: try container.decode(UInt64.self, forKey: Key("seq")),
            store: try container.decodeIfPresent(String.self, forKey: Key("store")))
        topic = try container.decode(Topic.self, forKey: Key("topic"))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(topic, forKey: Key("topic"))
        try container.encode(seq, forKey: Key("seq"))
        try container.encodeIfPresent(store, forKey: Key("store"))
    }
}

extension Reply: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        func field<T: Decodable>(_ key: String) throws -> T? {
            try container.decodeIfPresent(T.self, forKey: Key(key))
        }
        self.init()
        ok = try container.decode(Bool.self, forKey: Key("ok"))
        seq = try field("seq")
        country = try field("country")
        countries = try field("countries")
        count = try field("count")
        events = try field("events")
        more = try field("more")
        if let error = try container.decodeIfPresent([String: String].self, forKey: Key("error")) {
            guard let code = error["code"], let message = error["message"] else {
                throw DecodingError.dataCorruptedError(
                    forKey: Key("error"), in: container, debugDescription: "no code or message")
            }
            self.error = ErrorBody(code: code, message: message)
        }
        store = try field("store")
        var status = ServiceStatus()
        status.version = try field("version")
        status.uptimeMilliseconds = try (field("uptime_seconds") as Double?).map { seconds in
            guard seconds >= 0, let milliseconds = UInt64(exactly: (seconds * 1000).rounded()) else {
                throw DecodingError.dataCorruptedError(
                    forKey: Key("uptime_seconds"), in: container, debugDescription: "not a duration")
            }
            return milliseconds
        }
        status.visited = try field("visited")
        status.commandsServed = try field("commands_served")
        status.commandsRefused = try field("commands_refused")
        status.storePath = try field("store_path")
        status.storeBytes = try field("store_bytes")
        status.historyFrom = try field("history_from")
        status.endpoints = try field("endpoints")
        status.subscribers = try field("subscribers")
        if status != ServiceStatus() { self.status = status }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(ok, forKey: Key("ok"))
        try container.encodeIfPresent(seq, forKey: Key("seq"))
        try container.encodeIfPresent(country, forKey: Key("country"))
        try container.encodeIfPresent(countries, forKey: Key("countries"))
        try container.encodeIfPresent(count, forKey: Key("count"))
        try container.encodeIfPresent(events, forKey: Key("events"))
        try container.encodeIfPresent(more, forKey: Key("more"))
        try container.encodeIfPresent(
            error.map { ["code": $0.code, "message": $0.message] }, forKey: Key("error"))
        try container.encodeIfPresent(store, forKey: Key("store"))
        guard let status else { return }
        try container.encodeIfPresent(status.version, forKey: Key("version"))
        try container.encodeIfPresent(
            status.uptimeMilliseconds.map { Double($0) / 1000 }, forKey: Key("uptime_seconds"))
        try container.encodeIfPresent(status.visited, forKey: Key("visited"))
        try container.encodeIfPresent(status.commandsServed, forKey: Key("commands_served"))
        try container.encodeIfPresent(status.commandsRefused, forKey: Key("commands_refused"))
        try container.encodeIfPresent(status.storePath, forKey: Key("store_path"))
        try container.encodeIfPresent(status.storeBytes, forKey: Key("store_bytes"))
        try container.encodeIfPresent(status.historyFrom, forKey: Key("history_from"))
        try container.encodeIfPresent(status.endpoints, forKey: Key("endpoints"))
        try container.encodeIfPresent(status.subscribers, forKey: Key("subscribers"))
    }

    /// The reply through `JSONEncoder`.
    func encodedWithJSONEncoder() -> Data { (try? WireJSON.encoder.encode(self)) ?? Data() }
}

extension Request {
    /// The request through `JSONEncoder`, as an `Encodable` wrote it before ``JSONWriter`` did.
    func encodedWithJSONEncoder() -> Data {
        var fields: [String: JSONScalar] = ["op": .string(command.op)]
        fields["id"] = id.map(JSONScalar.string)
        fields["if_store"] = ifStore.map(JSONScalar.string)
        func refer(_ reference: CountryReference) {
            switch reference {
            case .index(let index): fields["index"] = .int(index)
            case .name(let name): fields["name"] = .string(name)
            }
        }
        switch command {
        case .query(.list), .query(.count), .change(.reset), .status: break
        case .query(.get(let reference)), .change(.remove(let reference)): refer(reference)
        case .change(.toggle(let reference, let ifSeq)):
            refer(reference)
            fields["if_seq"] = ifSeq.map(JSONScalar.seq)
        case .change(.set(let reference, let visited, let ifSeq)):
            refer(reference)
            fields["visited"] = .bool(visited)
            fields["if_seq"] = ifSeq.map(JSONScalar.seq)
        case .change(.add(let name, let visited)):
            fields["name"] = .string(name)
            fields["visited"] = .bool(visited)
        case .history(let since): fields["since"] = .seq(since)
        }
        return (try? WireJSON.encoder.encode(fields)) ?? Data()
    }
}

/// A request field's value, for the reference request encoder.
private enum JSONScalar: Encodable {
    case string(String)
    case int(Int)
    case seq(UInt64)
    case bool(Bool)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .seq(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        }
    }
}
