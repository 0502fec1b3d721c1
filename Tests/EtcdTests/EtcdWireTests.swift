import Foundation
import JSON
import Testing

@testable import Etcd

/// The gateway's JSON both ways, without etcd: base64, 64-bit integers as strings, absent
/// fields, prefix ends, and which answer becomes which error code.
@Suite struct EtcdWireTests {
    private func json(_ value: JSONValue) -> String {
        String(decoding: EtcdWire.encoded(value), as: UTF8.self)
    }

    @Test func keysAndValuesAreBase64AndIntegersStrings() {
        let range = EtcdRangeRequest(
            key: "k/1", rangeEnd: "k/2", limit: 5, revision: 7, sortOrder: .descending)
        #expect(
            json(EtcdWire.range(range))
                == #"{"key":"ay8x","limit":"5","range_end":"ay8y","revision":"7","sort_order":"DESCEND"}"#)
        let put = EtcdWire.operation(.put("k", Data([0, 1, 2, 0xFF])))
        #expect(json(put) == #"{"request_put":{"key":"aw==","value":"AAEC/w=="}}"#)
        #expect(
            json(EtcdWire.compare(.createRevision("k", equals: 0)))
                == #"{"create_revision":"0","key":"aw==","result":"EQUAL","target":"CREATE"}"#)
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
        let txn = try EtcdWire.txnResponse(
            try EtcdWire.parse(
                Array(
                    #"{"header":{"revision":"4"},"responses":[{"response_put":{"header":{}}},{"response_delete_range":{"header":{}}}]}"#
                        .utf8)))
        #expect(!txn.succeeded && txn.revision == 4 && txn.results.count == 2)
        if case .deleteRange(let deleted) = txn.results[1] {
            #expect(deleted == 0)
        } else {
            Issue.record("not a delete")
        }
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
        guard case .string(let text) = EtcdWire.base64(bytes) else { return }
        let kv = try EtcdWire.keyValue(.object(["key": EtcdWire.base64("k"), "value": .string(text)]))
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
