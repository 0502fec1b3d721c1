import Foundation

/// Decodes replies and events from ``JSONParser``'s values, with the rules the `Codable`
/// conformances have (required fields, `null` as absent for optionals, exact types), at a
/// fraction of `JSONDecoder`'s cost: a client taking a 10,000-row `list` spent most of its time
/// there. A `status` reply still goes through `JSONDecoder`.
struct WireDecodingError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum WireDecoding {
    static func parse(_ data: Data) throws -> JSONValue {
        let parsed = data.withUnsafeBytes { bytes in
            Result { () throws(JSONParser.Failure) in try JSONParser.parse(bytes) }
        }
        guard case .success(let value) = parsed else { throw WireDecodingError("not valid JSON") }
        return value
    }

    static func object(_ value: JSONValue, _ what: String) throws -> [String: JSONValue] {
        guard case .object(let fields) = value else { throw WireDecodingError("\(what) is not an object") }
        return fields
    }

    /// The field, or nil when it is absent or null.
    static func present(_ fields: [String: JSONValue], _ key: String) -> JSONValue? {
        guard let value = fields[key], value != .null else { return nil }
        return value
    }

    static func required(_ fields: [String: JSONValue], _ key: String) throws -> JSONValue {
        guard let value = present(fields, key) else { throw WireDecodingError("\"\(key)\" is missing") }
        return value
    }

    static func int(_ value: JSONValue, _ key: String) throws -> Int {
        guard case .integer(let number) = value, let int = Int(exactly: number) else {
            throw WireDecodingError("\"\(key)\" is not an integer")
        }
        return int
    }

    static func unsigned(_ value: JSONValue, _ key: String) throws -> UInt64 {
        switch value {
        case .integer(let number) where number >= 0: return UInt64(number)
        case .unsigned(let number): return number
        default: throw WireDecodingError("\"\(key)\" is not a non-negative integer")
        }
    }

    static func bool(_ value: JSONValue, _ key: String) throws -> Bool {
        guard case .bool(let flag) = value else { throw WireDecodingError("\"\(key)\" is not a boolean") }
        return flag
    }

    static func string(_ value: JSONValue, _ key: String) throws -> String {
        guard case .string(let text) = value else { throw WireDecodingError("\"\(key)\" is not a string") }
        return text
    }

    static func array(_ value: JSONValue, _ key: String) throws -> [JSONValue] {
        guard case .array(let elements) = value else { throw WireDecodingError("\"\(key)\" is not an array") }
        return elements
    }

    static func country(_ value: JSONValue) throws -> IndexedCountry {
        let fields = try object(value, "a country")
        return IndexedCountry(
            index: try int(try required(fields, "index"), "index"),
            name: try string(try required(fields, "name"), "name"),
            visited: try bool(try required(fields, "visited"), "visited"))
    }

    static func countries(_ value: JSONValue, _ key: String) throws -> [IndexedCountry] {
        let elements = try array(value, key)
        var rows: [IndexedCountry] = []
        rows.reserveCapacity(elements.count)
        for element in elements { rows.append(try country(element)) }
        return rows
    }

    static func event(_ value: JSONValue) throws -> Event {
        let fields = try object(value, "an event")
        let seq = try unsigned(try required(fields, "seq"), "seq")
        guard let topic = Topic(rawValue: try string(try required(fields, "topic"), "topic")) else {
            throw WireDecodingError("unknown topic")
        }
        switch topic {
        case .countryChanged:
            return Event(seq: seq, kind: .changed(try country(try required(fields, "country"))))
        case .countryAdded: return Event(seq: seq, kind: .added(try country(try required(fields, "country"))))
        case .countryRemoved:
            return Event(seq: seq, kind: .removed(try country(try required(fields, "country"))))
        case .countriesReset:
            return Event(
                seq: seq, kind: .reset(try countries(try required(fields, "countries"), "countries")))
        case .heartbeat: throw WireDecodingError("a heartbeat is not a change event")
        }
    }

    /// Keys only a `status` reply has: such a reply goes through `JSONDecoder`.
    static let statusKeys: Set<String> = [
        "version", "uptime_seconds", "visited", "commands_served", "commands_refused", "store", "store_bytes",
        "history_from", "endpoints", "subscribers",
    ]

    /// The reply, or nil when it is a `status` reply (left to `JSONDecoder`).
    static func reply(_ value: JSONValue) throws -> Reply? {
        let fields = try object(value, "a reply")
        if fields.keys.contains(where: statusKeys.contains) { return nil }
        var reply = Reply()
        reply.ok = try bool(try required(fields, "ok"), "ok")
        reply.seq = try present(fields, "seq").map { try unsigned($0, "seq") }
        reply.country = try present(fields, "country").map(country)
        reply.countries = try present(fields, "countries").map { try countries($0, "countries") }
        reply.count = try present(fields, "count").map { try int($0, "count") }
        reply.events = try present(fields, "events").map { try array($0, "events").map(event) }
        reply.more = try present(fields, "more").map { try bool($0, "more") }
        if let body = present(fields, "error") {
            let error = try object(body, "\"error\"")
            reply.error = Reply.ErrorBody(
                code: try string(try required(error, "code"), "code"),
                message: try string(try required(error, "message"), "message"))
        }
        return reply
    }
}
