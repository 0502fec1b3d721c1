import Foundation
import JSON

/// Why a frame is not the reply, event or heartbeat it should be.
public struct WireDecodingError: Error, CustomStringConvertible {
    /// What is wrong, e.g. `"seq" is missing`.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Decodes replies, events and heartbeats from ``JSONParser``'s values, with the rules the
/// `Codable` conformances the tests keep as the reference have (required fields, `null` as
/// absent for optionals, exact types), at a fraction of `JSONDecoder`'s cost: a client taking a
/// 10,000-row `list` spent most of its time there.
enum WireDecoding {
    static func parse(_ data: Data) throws -> JSONValue {
        do {
            return try JSONParser.parse(data, maximumNesting: Limits.maximumNesting)
        } catch .duplicateKey(let key) {
            throw WireDecodingError("the key \"\(key)\" is there more than once")
        } catch .tooDeep {
            throw WireDecodingError("arrays or objects nest more than \(Limits.maximumNesting) levels deep")
        } catch {
            throw WireDecodingError("not valid JSON")
        }
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

    /// A seq: 0 to `Int64.max`, as every store keeps seqs as signed 64-bit integers (SQLite,
    /// etcd). A larger one can only be forged, and one at `UInt64.max` would make the next seq,
    /// `seq + 1`, overflow wherever a subscriber looks for a gap.
    static func seqValue(_ value: JSONValue, _ key: String) throws -> UInt64 {
        switch value {
        case .integer(let number) where number >= 0: return UInt64(number)
        case .unsigned: throw WireDecodingError("\"\(key)\" is past the largest seq (\(Int64.max))")
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
        let seq = try seqValue(try required(fields, "seq"), "seq")
        let store = try present(fields, "store").map { try string($0, "store") }
        guard let topic = Topic(rawValue: try string(try required(fields, "topic"), "topic")) else {
            throw WireDecodingError("unknown topic")
        }
        let kind: Event.Kind
        switch topic {
        case .countryChanged: kind = .changed(try country(try required(fields, "country")))
        case .countryAdded: kind = .added(try country(try required(fields, "country")))
        case .countryRemoved: kind = .removed(try country(try required(fields, "country")))
        case .countriesReset: kind = .reset(try countries(try required(fields, "countries"), "countries"))
        case .heartbeat: throw WireDecodingError("a heartbeat is not a change event")
        }
        return Event(seq: seq, kind: kind, store: store)
    }

    /// A status field's value, of the type the field has.
    static func statusValue(_ value: JSONValue, _ kind: ServiceStatus.Value.Kind, _ key: String) throws
        -> ServiceStatus.Value
    {
        switch kind {
        case .text: return .text(try string(value, key))
        case .count: return .count(try int(value, key))
        case .seq: return .seq(try seqValue(value, key))
        case .list: return .list(try array(value, key).map { try string($0, key) })
        case .milliseconds:
            // Seconds; the service writes at most three decimals, anything finer is rounded.
            let milliseconds: Double
            switch value {
            case .integer(let seconds) where seconds >= 0: milliseconds = Double(seconds) * 1000
            case .unsigned(let seconds): milliseconds = Double(seconds) * 1000
            case .number(let seconds) where seconds >= 0: milliseconds = (seconds * 1000).rounded()
            default: throw WireDecodingError("\"\(key)\" is not a non-negative number of seconds")
            }
            guard let exact = UInt64(exactly: milliseconds) else {
                throw WireDecodingError("\"\(key)\" is too large")
            }
            return .milliseconds(exact)
        }
    }

    static func reply(_ value: JSONValue) throws -> Reply {
        let fields = try object(value, "a reply")
        var reply = Reply()
        var ok: Bool?
        // One pass over the members: a reply to a toggle does not look up ten status keys.
        for (key, value) in fields where value != .null {
            switch key {
            case "ok": ok = try bool(value, key)
            case "seq": reply.seq = try seqValue(value, key)
            case "store": reply.store = try string(value, key)
            case "country": reply.country = try country(value)
            case "countries": reply.countries = try countries(value, key)
            case "count": reply.count = try int(value, key)
            case "events": reply.events = try array(value, key).map(event)
            case "more": reply.more = try bool(value, key)
            case "error":
                let error = try object(value, "\"error\"")
                reply.error = Reply.ErrorBody(
                    code: try string(try required(error, "code"), "code"),
                    message: try string(try required(error, "message"), "message"))
            default:
                guard let field = ServiceStatus.fieldsByName[key] else { continue }  // a later field
                var status = reply.status ?? ServiceStatus()
                field.set(&status, try statusValue(value, field.kind, key))
                reply.status = status
            }
        }
        guard let ok else { throw WireDecodingError("\"ok\" is missing") }
        reply.ok = ok
        return reply
    }

    static func heartbeat(_ value: JSONValue) throws -> Heartbeat {
        let fields = try object(value, "a heartbeat")
        guard let topic = Topic(rawValue: try string(try required(fields, "topic"), "topic")) else {
            throw WireDecodingError("unknown topic")
        }
        var heartbeat = Heartbeat(
            seq: try seqValue(try required(fields, "seq"), "seq"),
            store: try present(fields, "store").map { try string($0, "store") })
        heartbeat.topic = topic
        return heartbeat
    }
}
