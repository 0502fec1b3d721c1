import Foundation
import JSON

/// A request of protocol v1: one JSON object with `op`, an optional `id`, and the op's fields.
public struct Request: Equatable, Sendable {
    /// The request id that makes retries safe: the same id gets the first reply again.
    public var id: String?
    /// What is asked.
    public var command: Command
    /// For a change: the store it is meant for (v1.1). A change that names another store than
    /// the service's is refused with `conflict`, so an `if_seq` from one store never matches a
    /// seq of another.
    public var ifStore: String?

    /// What is wrong with `id` as a request id, naming it `name` (`"id"`, `--id`); nil when it
    /// is a good one: 1 to ``Limits/maximumRequestIDBytes`` bytes of printable ASCII.
    public static func problem(withID id: String, named name: String) -> String? {
        // On the string's own bytes: through the view a byte cost about 15 instructions.
        var id = id
        return id.withUTF8 { problem(withIDBytes: UnsafeRawBufferPointer($0), named: name) }
    }

    /// ``problem(withID:named:)`` on an id's UTF-8 bytes: the request decoder checks an id where
    /// it lies in the request, before it makes a `String` of it.
    static func problem(withIDBytes bytes: UnsafeRawBufferPointer, named name: String) -> String? {
        // Bytes, not characters: a character of combining marks can be kilobytes, and every id
        // of a change is stored (docs/PROTOCOL.md). A good id (every request's) is checked in
        // one pass over its bytes; the message is made only for a bad one (making it cost a
        // toggle about 4,000 instructions).
        var bad: (offset: Int, byte: UInt8)?
        for offset in 0..<min(bytes.count, Limits.maximumRequestIDBytes)
        where bytes[offset] < 0x20 || bytes[offset] > 0x7E {
            bad = (offset, bytes[offset])
            break
        }
        guard bytes.isEmpty || bytes.count > Limits.maximumRequestIDBytes || bad != nil else { return nil }
        let rule =
            "\(name) must be 1 to \(Limits.maximumRequestIDBytes) bytes of printable ASCII (0x20 to 0x7E)"
        guard !bytes.isEmpty, bytes.count <= Limits.maximumRequestIDBytes, let bad else {
            return "\(rule); it has \(bytes.count) bytes"
        }
        return "\(rule); byte \(bad.offset) is \(String(format: "0x%02X", bad.byte))"
    }

    /// Creates a request.
    public init(id: String? = nil, command: Command, ifStore: String? = nil) {
        self.id = id
        self.command = command
        self.ifStore = ifStore
    }
}

// MARK: - Decoding, with a precise error for every mistake

extension Request {
    /// Parses and validates one request frame.
    ///
    /// Throws `too_large` for a body over ``Limits/maximumRequestBytes``, `bad_request` for
    /// anything that is not a JSON object with well-typed fields, and `unknown_op` for an op the
    /// protocol does not have. It never changes anything, so any input is safe to pass.
    public static func decode(_ body: Data) throws(CountriesError) -> Request {
        let decoded = body.withUnsafeBytes { bytes in
            Result { () throws(CountriesError) in try decode(bytes: bytes) }
        }
        return try decoded.get()
    }

    /// Decodes a request frame received as an array, as ``decode(_:)-(Data)`` does.
    public static func decode(_ body: [UInt8]) throws(CountriesError) -> Request {
        let decoded = body.withUnsafeBytes { bytes in
            Result { () throws(CountriesError) in try decode(bytes: bytes) }
        }
        return try decoded.get()
    }

    /// Both of them: the frame's bytes, valid for the call.
    private static func decode(bytes body: UnsafeRawBufferPointer) throws(CountriesError) -> Request {
        guard body.count <= Limits.maximumRequestBytes else {
            throw CountriesError(
                .tooLarge,
                "the request has \(body.count) bytes; at most \(Limits.maximumRequestBytes) are accepted")
        }
        var fields = RequestFields()
        let isObject: Bool
        do {
            isObject = try JSONParser.visitMembers(body, maximumNesting: Limits.maximumNesting) {
                key, value in
                fields.take(key, value)
            }
        } catch .duplicateKey(let key) {
            throw CountriesError(
                .badRequest,
                "the request has the key \(CountryName.quoted(key)) more than once; give each key once")
        } catch .tooDeep {
            throw CountriesError(
                .badRequest,
                "the request nests arrays or objects more than \(Limits.maximumNesting) levels deep; at most \(Limits.maximumNesting) are accepted"
            )
        } catch {
            throw CountriesError(
                .badRequest,
                "the request is not valid UTF-8 JSON: send one JSON object such as {\"op\": \"list\"}")
        }
        guard isObject else {
            // Valid JSON, so it parses again; this costs only a request that is refused.
            let typeName =
                (try? JSONParser.parse(body, maximumNesting: Limits.maximumNesting))?.typeName ?? "JSON"
            throw CountriesError(
                .badRequest,
                "the request must be a JSON object such as {\"op\": \"list\"}, not \(typeName)")
        }
        return try fields.request()
    }
}

/// The fields of a request object the protocol reads, gathered member by member, and the
/// checks on each. Any other key is ignored (a later version's field); `null` counts as absent,
/// except for `op`, which must be a string.
///
/// A string stays where it lies in the request (``JSON/JSONText``) until it is checked: `op` is
/// compared and never made a `String`, and no ignored string is (docs/BENCHMARKS.md, "Stop 59").
/// So the fields are valid only while the request's bytes are.
private struct RequestFields {
    var id: JSONMemberValue?
    var op: JSONMemberValue?
    var index: JSONMemberValue?
    var name: JSONMemberValue?
    var ifSeq: JSONMemberValue?
    var ifStore: JSONMemberValue?
    var visited: JSONMemberValue?
    var since: JSONMemberValue?

    /// Keeps the member if its key is one of the protocol's.
    mutating func take(_ key: JSONText, _ value: JSONMemberValue) {
        if key == "op" {
            op = value
        } else if key == "id" {
            id = value
        } else if key == "index" {
            index = value
        } else if key == "name" {
            name = value
        } else if key == "if_seq" {
            ifSeq = value
        } else if key == "if_store" {
            ifStore = value
        } else if key == "visited" {
            visited = value
        } else if key == "since" {
            since = value
        }
    }

    func request() throws(CountriesError) -> Request {
        let id = try requestID()
        guard let opValue = op else {
            throw CountriesError(
                .badRequest, "the request has no \"op\"; one of: \(Command.knownOps.joined(separator: ", "))")
        }
        guard case .text(let op) = opValue else {
            throw CountriesError(.badRequest, "\"op\" must be a string, not \(opValue.typeName)")
        }
        let command = try command(op)
        let ifStore = try string(self.ifStore, "if_store")
        if ifStore != nil {
            guard case .change = command else {
                throw CountriesError(.badRequest, "\"if_store\" applies to changes only, not to \(op.string)")
            }
        }
        return Request(id: id, command: command, ifStore: ifStore)
    }

    /// The command `op` names, compared byte by byte (the ops are ASCII), the changes first.
    private func command(_ op: JSONText) throws(CountriesError) -> Command {
        if op == "toggle" { return .change(.toggle(try reference(), ifSeq: try seq(ifSeq, "if_seq"))) }
        if op == "set" {
            guard let visited = try bool(visited, "visited") else {
                throw missing("visited", "true or false")
            }
            return .change(.set(try reference(), visited: visited, ifSeq: try seq(ifSeq, "if_seq")))
        }
        if op == "add" {
            guard let name = try string(name, "name") else { throw missing("name", "the country's name") }
            return .change(.add(name: name, visited: try bool(visited, "visited") ?? false))
        }
        if op == "remove" { return .change(.remove(try reference())) }
        if op == "reset" { return .change(.reset) }
        if op == "list" { return .query(.list) }
        if op == "count" { return .query(.count) }
        if op == "get" { return .query(.get(try reference())) }
        if op == "history" {
            guard let since = try seq(since, "since") else {
                throw missing("since", "a seq, 0 for everything kept")
            }
            return .history(since: since)
        }
        if op == "status" { return .status }
        throw CountriesError(
            .unknownOp,
            "unknown op \(CountryName.quoted(op.string)); one of: \(Command.knownOps.joined(separator: ", "))"
        )
    }

    private func requestID() throws(CountriesError) -> String? {
        guard let value = id, !value.isNull else { return nil }
        guard case .text(let text) = value else {
            throw CountriesError(.badRequest, "\"id\" must be a string, not \(value.typeName)")
        }
        // A plain id (every client's) is checked where it lies, before a `String` is made of
        // it: checked through the `String`, it cost about 300 instructions a request more.
        let problem =
            if let bytes = text.asciiBytes {
                Request.problem(withIDBytes: bytes, named: "\"id\"")
            } else {
                Request.problem(withID: text.string, named: "\"id\"")
            }
        if let problem { throw CountriesError(.badRequest, problem) }
        return text.string
    }

    /// `index` or `name`: exactly one of them.
    private func reference() throws(CountriesError) -> CountryReference {
        switch (index.flatMap { $0.isNull ? nil : $0 }, name.flatMap { $0.isNull ? nil : $0 }) {
        case (nil, nil):
            throw CountriesError(.badRequest, "give the country as \"index\" (0-based) or \"name\"")
        case (.some, .some):
            throw CountriesError(.badRequest, "give either \"index\" or \"name\", not both")
        case (.some(let value), nil):
            // An index beyond Int's range cannot be in the list; say so in the list's terms.
            switch value {
            case .other(.integer(let index)): return .index(Int(clamping: index))
            case .other(.unsigned(let index)): return .index(Int(clamping: index))
            default:
                throw CountriesError(.badRequest, "\"index\" must be an integer, not \(describe(value))")
            }
        case (nil, .some(let value)):
            guard case .text(let name) = value else {
                throw CountriesError(.badRequest, "\"name\" must be a string, not \(value.typeName)")
            }
            return .name(name.string)
        }
    }

    private func seq(_ field: JSONMemberValue?, _ key: String) throws(CountriesError) -> UInt64? {
        guard let value = field, !value.isNull else { return nil }
        switch value {
        case .other(.integer(let number)) where number >= 0: return UInt64(number)
        case .other(.unsigned(let number)): return number
        default:
            throw CountriesError(
                .badRequest, "\"\(key)\" must be a non-negative integer, not \(describe(value))")
        }
    }

    private func bool(_ field: JSONMemberValue?, _ key: String) throws(CountriesError) -> Bool? {
        guard let value = field, !value.isNull else { return nil }
        guard case .other(.bool(let flag)) = value else {
            throw CountriesError(.badRequest, "\"\(key)\" must be true or false, not \(value.typeName)")
        }
        return flag
    }

    private func string(_ field: JSONMemberValue?, _ key: String) throws(CountriesError) -> String? {
        guard let value = field, !value.isNull else { return nil }
        guard case .text(let text) = value else {
            throw CountriesError(.badRequest, "\"\(key)\" must be a string, not \(value.typeName)")
        }
        return text.string
    }

    private func missing(_ key: String, _ what: String) -> CountriesError {
        CountriesError(.badRequest, "the request has no \"\(key)\" (\(what))")
    }

    private func describe(_ value: JSONMemberValue) -> String {
        switch value {
        case .other(.integer(let number)): return "\(number)"
        case .other(.unsigned(let number)): return "\(number)"
        case .other(.number(let number)) where number == number.rounded() && abs(number) < 0x1p64:
            // 0.99999999999999999999 or 1e-400: whole only once rounded to a Double.
            return "a number that only rounds to one (\(number))"
        case .other(.number(let number)): return "\(number)"
        default: return value.typeName
        }
    }
}

// MARK: - Encoding, for clients

extension Request {
    /// The request as one UTF-8 JSON frame, keys sorted, as `Output` (`Data` unless asked
    /// otherwise).
    @inlinable
    public func encoded<Output: JSONOutput>(as output: Output.Type = Data.self) -> Output {
        JSONWriter.encode(self, capacity: 64, as: output) { $0.request($1) }
    }
}

// MARK: - What a change asks, for the request-id memory

extension Change {
    /// What this change asks, in one form however the request was written: its request
    /// without the id, keys sorted (the bytes ``Request/encoded(as:)`` writes for it).
    ///
    /// The service remembers it beside a request id, so that a retry (the same change again)
    /// gets the first reply and another change under the same id is refused with `conflict`.
    /// A country named by reference counts as its folded key (names match case-insensitively
    /// after trimming), so `"fRaNcE"` and `"France"` ask the same. An array, as every encoding
    /// on the service's request path (docs/BENCHMARKS.md, "Stop 58").
    public var canonicalForm: [UInt8] {
        func folded(_ reference: CountryReference) -> CountryReference {
            guard case .name(let name) = reference else { return reference }
            return .name(CountryName.foldedKey(name))
        }
        let change: Change
        switch self {
        case .toggle(let reference, let ifSeq): change = .toggle(folded(reference), ifSeq: ifSeq)
        case .set(let reference, let visited, let ifSeq):
            change = .set(folded(reference), visited: visited, ifSeq: ifSeq)
        case .remove(let reference): change = .remove(folded(reference))
        case .add, .reset: change = self
        }
        return Request(command: .change(change)).encoded(as: [UInt8].self)
    }
}
