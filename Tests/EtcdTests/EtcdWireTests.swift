import Foundation
import JSON
import TestSupport
import Testing

@testable import Etcd

/// The gateway's JSON both ways, without etcd: base64, 64-bit integers as strings, absent
/// fields, prefix ends, which answer becomes which error code, and which token can go in a header.
@Suite struct EtcdWireTests {
    /// etcd's simple tokens and JWTs go as they are; a token that could end the header line (or
    /// is not ASCII at all) is refused before it is sent anywhere.
    @Test func onlyATokenOfVisibleASCIIIsSent() {
        #expect(EtcdAuthenticator.canBeSent("yqLMcFMhZbbbQNmP.12"))
        #expect(EtcdAuthenticator.canBeSent("eyJhbGciOiJSUzI1NiJ9.eyJ1c2VybmFtZSI6InJvb3QifQ.c2ln-_"))
        for bad in ["abc\r\nX-Evil: 1", "a b", "tab\there", "caf\u{E9}", "nul\u{0}", "del\u{7F}"] {
            #expect(!EtcdAuthenticator.canBeSent(bad), "\(bad.debugDescription)")
        }
    }

    private func json(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func keysAndValuesAreBase64AndIntegersStrings() {
        let range = EtcdRangeRequest(
            key: "k/1", rangeEnd: "k/2", limit: 5, revision: 7, sortOrder: .descending)
        #expect(
            json(EtcdWire.range(range))
                == #"{"key":"ay8x","limit":"5","range_end":"ay8y","revision":"7","sort_order":"DESCEND"}"#)
        // A transaction as the gateway documents it (the reference the gRPC tests compare with).
        #expect(
            json(
                EtcdWire.encoded(
                    Reference.txn(
                        compare: [.createRevision("k", equals: 0)],
                        success: [.put("k", Data([0, 1, 2, 0xFF]))],
                        failure: [])))
                == #"{"compare":[{"create_revision":"0","key":"aw==","result":"EQUAL","target":"CREATE"}],"failure":[],"success":[{"request_put":{"key":"aw==","value":"AAEC/w=="}}]}"#
        )
    }

    /// Every range body is the tree the gateway documents, written as `JSONWriter.value` writes
    /// trees (keys sorted): built here from random ranges, and compared byte for byte with what
    /// ``EtcdWire`` writes member by member.
    @Test func requestsAreTheGatewaysTreesByteForByte() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<2_000 {
            let range = Reference.range(&random)
            #expect(json(EtcdWire.range(range)) == json(EtcdWire.encoded(Reference.tree(range))))
        }
    }

    /// The gateway's request fields (etcd's `rpc.proto` in JSON), as plain trees.
    enum Reference {
        /// A transaction's request as the gateway takes it.
        static func txn(compare: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation])
            -> JSONValue
        {
            .object([
                "compare": .array(compare.map(tree)), "success": .array(success.map(tree)),
                "failure": .array(failure.map(tree)),
            ])
        }

        static let keys = ["", "k", "/countries/events/00000000000000000001", "é/😀", "a\u{0}b", "\"\\"]

        static func base64(_ text: String) -> JSONValue { .string(Data(text.utf8).base64EncodedString()) }
        static func bytes(_ random: inout SplitMix64) -> Data {
            Data(
                (0..<Int.random(in: 0...40, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                })
        }
        static func key(_ random: inout SplitMix64) -> String { keys.randomElement(using: &random)! }
        static func revision(_ random: inout SplitMix64) -> Int64 {
            [0, 1, -1, Int64.max, Int64.min, Int64.random(in: 0...1_000_000, using: &random)].randomElement(
                using: &random)!
        }

        static func compare(_ random: inout SplitMix64) -> EtcdCompare {
            let name = key(&random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: return .value(name, equals: bytes(&random))
            case 1: return .createRevision(name, equals: revision(&random))
            case 2: return .modRevision(name, equals: revision(&random))
            case 3: return .version(name, equals: revision(&random))
            case 4: return .modRevisionLess(name, than: revision(&random))
            default: return .modRevisionGreater(name, than: revision(&random))
            }
        }

        static func range(_ random: inout SplitMix64) -> EtcdRangeRequest {
            EtcdRangeRequest(
                key: key(&random), rangeEnd: Bool.random(using: &random) ? key(&random) : nil,
                limit: Bool.random(using: &random) ? 0 : Int.random(in: 1...1_000, using: &random),
                revision: Bool.random(using: &random) ? 0 : revision(&random),
                keysOnly: Bool.random(using: &random), countOnly: Bool.random(using: &random),
                sortTarget: [.key, .version, .createRevision, .modRevision, .value].randomElement(
                    using: &random)!,
                sortOrder: [.none, .ascending, .descending].randomElement(using: &random)!,
                serializable: Bool.random(using: &random))
        }

        static func operation(_ random: inout SplitMix64) -> EtcdOperation {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return .range(range(&random))
            case 1: return .put(key(&random), bytes(&random))
            case 2: return .putLeased(key(&random), bytes(&random), lease: revision(&random))
            default:
                return .deleteRange(
                    key: key(&random), rangeEnd: Bool.random(using: &random) ? key(&random) : nil)
            }
        }

        static func tree(_ compare: EtcdCompare) -> JSONValue {
            let (name, target, result, field, value): (String, String, String, String, JSONValue)
            switch compare {
            case .value(let key, let bytes):
                (name, target, result, field, value) = (
                    key, "VALUE", "EQUAL", "value", .string(bytes.base64EncodedString())
                )
            case .createRevision(let key, let revision):
                (name, target, result, field, value) = (
                    key, "CREATE", "EQUAL", "create_revision", .string(String(revision))
                )
            case .modRevision(let key, let revision):
                (name, target, result, field, value) = (
                    key, "MOD", "EQUAL", "mod_revision", .string(String(revision))
                )
            case .version(let key, let version):
                (name, target, result, field, value) = (
                    key, "VERSION", "EQUAL", "version", .string(String(version))
                )
            case .modRevisionLess(let key, let revision):
                (name, target, result, field, value) = (
                    key, "MOD", "LESS", "mod_revision", .string(String(revision))
                )
            case .modRevisionGreater(let key, let revision):
                (name, target, result, field, value) = (
                    key, "MOD", "GREATER", "mod_revision", .string(String(revision))
                )
            }
            return .object([
                "key": base64(name), "target": .string(target), "result": .string(result), field: value,
            ])
        }

        static func tree(_ range: EtcdRangeRequest) -> JSONValue {
            var fields: [String: JSONValue] = ["key": base64(range.key)]
            if let end = range.rangeEnd { fields["range_end"] = base64(end) }
            if range.limit != 0 { fields["limit"] = .string(String(range.limit)) }
            if range.revision != 0 { fields["revision"] = .string(String(range.revision)) }
            if range.keysOnly { fields["keys_only"] = .bool(true) }
            if range.countOnly { fields["count_only"] = .bool(true) }
            if range.sortTarget != .key { fields["sort_target"] = .string(range.sortTarget.rawValue) }
            if range.sortOrder != .none { fields["sort_order"] = .string(range.sortOrder.rawValue) }
            if range.serializable { fields["serializable"] = .bool(true) }
            return .object(fields)
        }

        static func tree(_ operation: EtcdOperation) -> JSONValue {
            switch operation {
            case .range(let request): return .object(["request_range": tree(request)])
            case .put(let key, let value):
                return .object([
                    "request_put": .object([
                        "key": base64(key), "value": .string(value.base64EncodedString()),
                    ])
                ])
            case .putLeased(let key, let value, let lease):
                return .object([
                    "request_put": .object([
                        "key": base64(key), "value": .string(value.base64EncodedString()),
                        "lease": .string(String(lease)),
                    ])
                ])
            case .deleteRange(let key, let rangeEnd):
                var fields: [String: JSONValue] = ["key": base64(key)]
                if let rangeEnd { fields["range_end"] = base64(rangeEnd) }
                return .object(["request_delete_range": .object(fields)])
            }
        }
    }

    @Test func answersWithAbsentFieldsReadAsZeroFalseAndEmpty() throws {
        let answer = try EtcdWire.parse(
            Array(
                #"{"header":{"revision":"9"},"kvs":[{"key":"aw==","create_revision":"2","mod_revision":"3","version":"1","value":"AAEC/w=="},{"key":"bA=="}],"count":"2"}"#
                    .utf8))
        let range = try EtcdWire.rangeResponse(answer)
        #expect(range.revision == 9 && range.count == 2 && !range.more)
        #expect(
            range.kvs[0]
                == EtcdKeyValue(
                    key: "k", value: Data([0, 1, 2, 0xFF]), createRevision: 2, modRevision: 3, version: 1))
        #expect(
            range.kvs[1]
                == EtcdKeyValue(key: "l", value: Data(), createRevision: 0, modRevision: 0, version: 0))
    }

    @Test func valuesThatAreNotBase64AreMalformed() {
        #expect(throws: EtcdWire.Malformed.self) {
            try EtcdWire.rangeResponse(try EtcdWire.parse(Array(#"{"kvs":[{"key":"***"}]}"#.utf8)))
        }
        #expect(throws: EtcdWire.Malformed.self) {
            try EtcdWire.rangeResponse(try EtcdWire.parse(Array(#"{"count":"many"}"#.utf8)))
        }
    }

    @Test func everyBinaryValueSurvivesBase64() throws {
        let bytes = Data((0...255).map { UInt8($0) })
        var writer = JSONWriter()
        bytes.withUnsafeBytes { writer.base64String($0) }
        let text = try #require(String(decoding: writer.bytes, as: UTF8.self).split(separator: "\"").first)
        let kv = try EtcdWire.keyValue(.object(["key": .string("aw=="), "value": .string(String(text))]))
        #expect(kv.value == bytes)
    }

    @Test func prefixEndIsTheNextCharacter() {
        #expect(EtcdRangeRequest.prefixEnd("a/") == "a0")
        #expect(EtcdRangeRequest.prefixEnd("a\u{7F}") == "a\u{80}")
        #expect(EtcdRangeRequest.prefixEnd("\u{D7FF}") == "\u{E000}")
        #expect(EtcdRangeRequest.prefixEnd("a\u{10FFFF}") == "b")
        #expect(EtcdRangeRequest.prefixEnd("") == "\u{0}")
        let all = EtcdRangeRequest.prefix("")
        #expect(all.key == "\u{0}" && all.rangeEnd == "\u{0}")
    }

    @Test func gRPCAnswersAreClassifiedByWhatTheyProve() {
        typealias C = EtcdClassification
        #expect(C.grpc(code: 14, message: "etcdserver: no leader", .write) == .noQuorum)
        #expect(C.grpc(code: 14, message: "etcdserver: request timed out", .write) == .outcomeUnknown)
        #expect(C.grpc(code: 14, message: "etcdserver: request timed out", .read) == .noQuorum)
        #expect(C.grpc(code: 14, message: "etcdserver: leader changed", .write) == .outcomeUnknown)
        #expect(
            C.grpc(code: 3, message: "etcdserver: too many operations in txn request", .write) == .rejected)
        #expect(
            C.grpc(code: 11, message: "etcdserver: mvcc: required revision has been compacted", .read)
                == .compacted)
        #expect(
            C.grpc(code: 11, message: "etcdserver: mvcc: required revision is a future revision", .read)
                == .rejected)
        #expect(C.grpc(code: 2, message: "something new", .write) == .outcomeUnknown)
        // A watch's cancel reason carries the refusal's code as Go prints a status error.
        let refused = C.cancelReason(
            "rpc error: code = PermissionDenied desc = etcdserver: permission denied")
        #expect(refused.code == 7 && refused.message == "etcdserver: permission denied")
        #expect(C.grpc(code: refused.code, message: refused.message, .read) == .rejected)
        let stale = C.cancelReason("rpc error: code = Unauthenticated desc = etcdserver: invalid auth token")
        #expect(stale.code == 16 && stale.message == "etcdserver: invalid auth token")
        for other in [
            "", "etcdserver: no leader", "rpc error: code = Mystery desc = x", "rpc error: code = ",
        ] {
            #expect(C.cancelReason(other) == (14, other), "\(other)")
        }
    }

    @Test func errorAnswersOfCallsAndStreamsAreRead() throws {
        let call = try EtcdWire.parse(
            Array(#"{"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14}"#.utf8))
        let callError = EtcdWire.errorAnswer(call)
        #expect(callError?.code == 14 && callError?.message == "etcdserver: no leader")
        let stream = try EtcdWire.parse(
            Array(
                #"{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","http_status":"Service Unavailable"}}"#
                    .utf8))
        let streamError = EtcdWire.errorAnswer(stream)
        #expect(streamError?.code == 14 && streamError?.message == "etcdserver: no leader")
        let none = EtcdWire.errorAnswer(try EtcdWire.parse(Array(#"{"header":{}}"#.utf8)))
        #expect(none == nil)
    }
}
