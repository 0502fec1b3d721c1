import Foundation
import JSON

/// The gateway's JSON, both ways: ranges, the hot path's requests, written straight into a
/// ``JSON/JSONWriter``, the rare ones (leases, sign-in) as ``JSON/JSONValue`` trees, and answers
/// decoded into the module's types. Transactions and watches go over gRPC
/// (``EtcdProtobufWire``). Keys and values are base64 on the wire; 64-bit integers are JSON
/// strings (the gateway writes them so and reads either); absent fields are 0, false or empty.
enum EtcdWire {
    /// An answer that is not what the gateway documents.
    struct Malformed: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    // MARK: Requests

    // Written member by member into one buffer, keys in sorted order (the bytes
    // `JSONWriter.value` would write for the same tree): a commit's request, when it still went
    // through the gateway, cost about a tenth of the writer's CPU per change at one client as a
    // tree of dictionaries (docs/BENCHMARKS.md, "Stop 42").

    static func int64(_ value: Int64) -> JSONValue { .string(String(value)) }

    /// The body of a range read.
    static func range(_ request: EtcdRangeRequest) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        write(request, into: &writer)
        return writer.bytes
    }

    static func encoded(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.value(value)
        return writer.bytes
    }

    /// A 64-bit integer as the gateway takes it: a JSON string.
    private static func quoted(_ value: Int64, into writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "\""))
        writer.integer(value)
        writer.byte(UInt8(ascii: "\""))
    }

    private static func write(_ request: EtcdRangeRequest, into writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "{"))
        if request.countOnly { writer.raw(#""count_only":true,"#) }
        writer.raw(#""key":"#)
        if let bytes = request.keyBytes {
            bytes.withUnsafeBytes { writer.base64String($0) }
        } else {
            writer.base64String(utf8: request.key)
        }
        if request.keysOnly { writer.raw(#","keys_only":true"#) }
        if request.limit != 0 {
            writer.raw(#","limit":"#)
            quoted(Int64(request.limit), into: &writer)
        }
        if let end = request.rangeEnd {
            writer.raw(#","range_end":"#)
            writer.base64String(utf8: end)
        }
        if request.revision != 0 {
            writer.raw(#","revision":"#)
            quoted(request.revision, into: &writer)
        }
        if request.serializable { writer.raw(#","serializable":true"#) }
        if request.sortOrder != .none {
            writer.raw(#","sort_order":"#)
            writer.string(request.sortOrder.rawValue)
        }
        if request.sortTarget != .key {
            writer.raw(#","sort_target":"#)
            writer.string(request.sortTarget.rawValue)
        }
        writer.byte(UInt8(ascii: "}"))
    }

    // MARK: Answers

    static func parse(_ bytes: [UInt8]) throws(Malformed) -> [String: JSONValue] {
        // etcd's answers nest 5 deep at most (txn, responses, response, kvs, kv); 16 is room.
        let value: JSONValue
        do {
            value = try bytes.withUnsafeBytes { raw throws(JSONParser.Failure) in try JSONParser.parse(raw) }
        } catch {
            throw Malformed("the answer is not JSON (\(error)): \(preview(bytes))")
        }
        guard case .object(let fields) = value else { throw Malformed("the answer is not a JSON object") }
        return fields
    }

    static func preview(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(200), as: UTF8.self)
    }

    static func object(_ fields: [String: JSONValue], _ key: String) throws(Malformed) -> [String: JSONValue]
    {
        switch fields[key] {
        case nil, .null: return [:]
        case .object(let inner): return inner
        default: throw Malformed("\(key) is not an object")
        }
    }

    static func array(_ fields: [String: JSONValue], _ key: String) throws(Malformed) -> [JSONValue] {
        switch fields[key] {
        case nil, .null: return []
        case .array(let elements): return elements
        default: throw Malformed("\(key) is not an array")
        }
    }

    static func int64(_ fields: [String: JSONValue], _ key: String) throws(Malformed) -> Int64 {
        switch fields[key] {
        case nil, .null: return 0
        case .integer(let number): return number
        case .string(let text):
            guard let number = Int64(text) else { throw Malformed("\(key) is not a 64-bit integer: \(text)") }
            return number
        default: throw Malformed("\(key) is not a 64-bit integer")
        }
    }

    static func uint64(_ fields: [String: JSONValue], _ key: String) throws(Malformed) -> UInt64 {
        switch fields[key] {
        case nil, .null: return 0
        case .integer(let number) where number >= 0: return UInt64(number)
        case .unsigned(let number): return number
        case .string(let text):
            guard let number = UInt64(text) else {
                throw Malformed("\(key) is not an unsigned integer: \(text)")
            }
            return number
        default: throw Malformed("\(key) is not an unsigned integer")
        }
    }

    static func bool(_ fields: [String: JSONValue], _ key: String) throws(Malformed) -> Bool {
        switch fields[key] {
        case nil, .null: return false
        case .bool(let flag): return flag
        default: throw Malformed("\(key) is not a boolean")
        }
    }

    static func string(_ fields: [String: JSONValue], _ key: String) throws(Malformed) -> String {
        switch fields[key] {
        case nil, .null: return ""
        case .string(let text): return text
        default: throw Malformed("\(key) is not a string")
        }
    }

    static func strings(_ fields: [String: JSONValue], _ key: String) throws(Malformed) -> [String] {
        var result: [String] = []
        for element in try array(fields, key) {
            guard case .string(let text) = element else { throw Malformed("\(key) holds a non-string") }
            result.append(text)
        }
        return result
    }

    static func bytes(_ fields: [String: JSONValue], _ key: String) throws(Malformed) -> Data {
        let text = try string(fields, key)
        guard let data = Data(base64Encoded: text) else { throw Malformed("\(key) is not base64: \(text)") }
        return data
    }

    static func revision(_ fields: [String: JSONValue]) throws(Malformed) -> Int64 {
        try int64(try object(fields, "header"), "revision")
    }

    static func keyValue(_ value: JSONValue) throws(Malformed) -> EtcdKeyValue {
        guard case .object(let fields) = value else { throw Malformed("a kv is not an object") }
        let key = EtcdKeyValue.key(from: try bytes(fields, "key"))
        return EtcdKeyValue(
            key: key.key, value: try bytes(fields, "value"),
            createRevision: try int64(fields, "create_revision"),
            modRevision: try int64(fields, "mod_revision"),
            version: try int64(fields, "version"), keyBytes: key.keyBytes)
    }

    static func rangeResponse(_ fields: [String: JSONValue]) throws(Malformed) -> EtcdRangeResponse {
        var kvs: [EtcdKeyValue] = []
        for element in try array(fields, "kvs") { kvs.append(try keyValue(element)) }
        return EtcdRangeResponse(
            kvs: kvs, count: try int64(fields, "count"), more: try bool(fields, "more"),
            revision: try revision(fields))
    }

    static func members(_ fields: [String: JSONValue]) throws(Malformed) -> [EtcdMember] {
        var members: [EtcdMember] = []
        for element in try array(fields, "members") {
            guard case .object(let member) = element else { throw Malformed("a member is not an object") }
            members.append(
                EtcdMember(
                    id: try uint64(member, "ID"), name: try string(member, "name"),
                    clientURLs: try strings(member, "clientURLs"), peerURLs: try strings(member, "peerURLs")))
        }
        return members
    }

    static func status(_ fields: [String: JSONValue], endpoint: String) throws(Malformed) -> EtcdMemberStatus
    {
        var status = EtcdMemberStatus(
            endpoint: endpoint, memberID: try uint64(try object(fields, "header"), "member_id"),
            leaderID: try uint64(fields, "leader"), raftTerm: try uint64(fields, "raftTerm"),
            version: try string(fields, "version"))
        status.revision = try revision(fields)
        status.raftAppliedIndex = try uint64(fields, "raftAppliedIndex")
        return status
    }

    /// An error answer's message and gRPC code: `{"error":"...","message":"...","code":N}` for
    /// a call, `{"error":{"grpc_code":N,"message":"..."}}` inside a stream.
    static func errorAnswer(_ fields: [String: JSONValue]) -> (code: Int64, message: String)? {
        if case .object(let inner) = fields["error"] {
            return ((try? int64(inner, "grpc_code")) ?? 2, (try? string(inner, "message")) ?? "")
        }
        guard fields["error"] != nil || fields["code"] != nil else { return nil }
        let message = (try? string(fields, "message")) ?? (try? string(fields, "error")) ?? ""
        return ((try? int64(fields, "code")) ?? 2, message)
    }
}
