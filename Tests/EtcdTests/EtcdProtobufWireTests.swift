import Foundation
import JSON
import TestSupport
import Testing

@testable import Etcd

/// etcd's protobuf messages for a transaction and a watch, without etcd: each request is the
/// tree the gateway documents for it, read back through a schema typed from etcd's `rpc.proto`;
/// the wire format's own cases; a stream cut into its messages wherever its chunks end; and
/// answers cut short or made up throw, never crash.
@Suite struct EtcdProtobufWireTests {
    /// How a field of the schema reads.
    private enum Kind {
        case bytes
        case int64
        case bool
        case enumeration([String])
        case message(String)
        case repeated(String)
    }

    /// etcd's `rpc.proto`, as far as a transaction's request goes: message → number → field.
    private static let schema: [String: [Int: (name: String, kind: Kind)]] = [
        "TxnRequest": [
            1: ("compare", .repeated("Compare")), 2: ("success", .repeated("RequestOp")),
            3: ("failure", .repeated("RequestOp")),
        ],
        "Compare": [
            1: ("result", .enumeration(["EQUAL", "GREATER", "LESS", "NOT_EQUAL"])),
            2: ("target", .enumeration(["VERSION", "CREATE", "MOD", "VALUE", "LEASE"])),
            3: ("key", .bytes), 4: ("version", .int64), 5: ("create_revision", .int64),
            6: ("mod_revision", .int64),
            7: ("value", .bytes), 8: ("lease", .int64), 64: ("range_end", .bytes),
        ],
        "RequestOp": [
            1: ("request_range", .message("RangeRequest")), 2: ("request_put", .message("PutRequest")),
            3: ("request_delete_range", .message("DeleteRangeRequest")),
        ],
        "RangeRequest": [
            1: ("key", .bytes), 2: ("range_end", .bytes), 3: ("limit", .int64), 4: ("revision", .int64),
            5: ("sort_order", .enumeration(["NONE", "ASCEND", "DESCEND"])),
            6: ("sort_target", .enumeration(["KEY", "VERSION", "CREATE", "MOD", "VALUE"])),
            7: ("serializable", .bool), 8: ("keys_only", .bool), 9: ("count_only", .bool),
        ],
        "PutRequest": [1: ("key", .bytes), 2: ("value", .bytes), 3: ("lease", .int64)],
        "DeleteRangeRequest": [1: ("key", .bytes), 2: ("range_end", .bytes)],
        "WatchRequest": [
            1: ("create_request", .message("WatchCreateRequest")),
            2: ("cancel_request", .message("WatchCancelRequest")),
            3: ("progress_request", .message("WatchProgressRequest")),
        ],
        "WatchCreateRequest": [
            1: ("key", .bytes), 2: ("range_end", .bytes), 3: ("start_revision", .int64),
            4: ("progress_notify", .bool), 5: ("filters", .enumeration(["NOPUT", "NODELETE"])),
            6: ("prev_kv", .bool), 7: ("watch_id", .int64), 8: ("fragment", .bool),
        ],
        "WatchCancelRequest": [1: ("watch_id", .int64)],
        "WatchProgressRequest": [:],
    ]

    /// `bytes` as the gateway's JSON tree of `message`: proto3's defaults as the gateway's
    /// request trees hold them (a compare's result and target always, arrays always).
    private static func tree(_ bytes: ArraySlice<UInt8>, as message: String) throws -> JSONValue {
        let fields = try #require(schema[message], "no schema for \(message)")
        var object: [String: JSONValue] = [:]
        var reader = ProtobufReader(bytes)
        while let (number, value) = try reader.next() {
            let (name, kind) = try #require(fields[number], "\(message) has no field \(number)")
            switch kind {
            case .bytes: object[name] = .string(Data(try value.bytes(name)).base64EncodedString())
            case .int64: object[name] = .string(String(try value.int64(name)))
            case .bool: object[name] = .bool(try value.bool(name))
            case .enumeration(let names):
                let number = try value.int64(name)
                try #require(names.indices.contains(Int(number)), "\(message).\(name) has no value \(number)")
                object[name] = .string(names[Int(number)])
            case .message(let inner): object[name] = try tree(try value.bytes(name), as: inner)
            case .repeated(let inner):
                guard case .array(var elements) = object[name] ?? .array([]) else { continue }
                elements.append(try tree(try value.bytes(name), as: inner))
                object[name] = .array(elements)
            }
        }
        switch message {
        case "TxnRequest":
            for name in ["compare", "success", "failure"] where object[name] == nil {
                object[name] = .array([])
            }
        case "Compare":
            if object["result"] == nil { object["result"] = .string("EQUAL") }
            if object["target"] == nil { object["target"] = .string("VERSION") }
        default: break
        }
        return .object(object)
    }

    @Test func requestsAreTheGatewaysTreesInEtcdsFieldNumbers() throws {
        var random = SplitMix64(seed: 11)
        typealias Reference = EtcdWireTests.Reference
        for _ in 0..<2_000 {
            let compares = (0..<Int.random(in: 0...4, using: &random)).map { _ in Reference.compare(&random) }
            let success = (0..<Int.random(in: 0...5, using: &random)).map { _ in Reference.operation(&random)
            }
            let failure = (0..<Int.random(in: 0...3, using: &random)).map { _ in Reference.operation(&random)
            }
            let expected = JSONValue.object([
                "compare": .array(compares.map(Reference.tree)),
                "success": .array(success.map(Reference.tree)),
                "failure": .array(failure.map(Reference.tree)),
            ])
            let bytes = EtcdProtobufWire.txn(compare: compares, success: success, failure: failure)
            let read = try Self.tree(bytes[...], as: "TxnRequest")
            #expect(EtcdWire.encoded(read) == EtcdWire.encoded(expected))
        }
    }

    @Test func watchRequestsAreTheGatewaysTreesInEtcdsFieldNumbers() throws {
        var random = SplitMix64(seed: 13)
        typealias Reference = EtcdWireTests.Reference
        for _ in 0..<2_000 {
            let range = Reference.range(&random)
            let start = Bool.random(using: &random) ? 0 : Int64.random(in: 1...Int64.max, using: &random)
            var create: [String: JSONValue] = ["key": Reference.base64(range.key)]
            if let end = range.rangeEnd { create["range_end"] = Reference.base64(end) }
            if start != 0 { create["start_revision"] = .string(String(start)) }
            let expected = JSONValue.object(["create_request": .object(create)])
            let bytes = EtcdProtobufWire.watchCreate(range, startRevision: start)
            let read = try Self.tree(bytes[...], as: "WatchRequest")
            #expect(EtcdWire.encoded(read) == EtcdWire.encoded(expected))
        }
    }

    /// A `WatchResponse` as etcd writes one: a header, the watch's id, and a put and a delete.
    private static func watchAnswer() -> ProtobufWriter {
        var answer = ProtobufWriter()
        answer.message(1) { header in
            header.int64(1, 77)
            header.int64(3, 12)
        }
        answer.int64(2, 0)
        answer.message(11) { event in
            event.message(2) { kv in
                kv.string(1, "/e/1")
                kv.int64(2, 11)
                kv.int64(3, 11)
                kv.int64(4, 1)
                kv.bytes(5, Data([0xFF, 0, 7]))
            }
        }
        answer.message(11) { event in
            event.int64(1, 1)
            event.message(2) { kv in
                kv.string(1, "/e/0")
                kv.int64(3, 12)
            }
        }
        return answer
    }

    @Test func watchAnswersAreReadAndMadeUpOnesThrowNeverCrash() throws {
        let answer = Self.watchAnswer().bytes
        let decoded = try EtcdProtobufWire.watchResponse(answer[...])
        #expect(
            decoded
                == EtcdWatchResponse(
                    revision: 12,
                    events: [
                        EtcdWatchEvent(
                            kind: .put,
                            kv: EtcdKeyValue(
                                key: "/e/1", value: Data([0xFF, 0, 7]), createRevision: 11, modRevision: 11,
                                version: 1)),
                        EtcdWatchEvent(
                            kind: .delete,
                            kv: EtcdKeyValue(
                                key: "/e/0", value: Data(), createRevision: 0, modRevision: 12, version: 0)),
                    ]))
        // The creation, and a cancellation for a compacted start.
        var created = ProtobufWriter()
        created.message(1) { $0.int64(3, 5) }
        created.bool(3, true)
        #expect(
            try EtcdProtobufWire.watchResponse(created.bytes[...])
                == EtcdWatchResponse(revision: 5, created: true))
        var canceled = ProtobufWriter()
        canceled.bool(4, true)
        canceled.int64(5, 40)
        canceled.string(6, "etcdserver: mvcc: required revision has been compacted")
        #expect(
            try EtcdProtobufWire.watchResponse(canceled.bytes[...])
                == EtcdWatchResponse(
                    canceled: true, compactRevision: 40,
                    cancelReason: "etcdserver: mvcc: required revision has been compacted"))
        // Every cut, every byte changed and random bytes are a whole answer or an error.
        for length in 0..<answer.count { _ = try? EtcdProtobufWire.watchResponse(answer[..<length]) }
        var random = SplitMix64(seed: 5)
        for _ in 0..<5_000 {
            var bytes = answer
            bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            _ = try? EtcdProtobufWire.watchResponse(bytes[...])
            let noise = (0..<Int.random(in: 0...64, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? EtcdProtobufWire.watchResponse(noise[...])
        }
        // What etcd never sends is named: an event of a third type, a fragment (never asked
        // for), events that are not a message.
        #expect(throws: EtcdWire.Malformed.self) {
            try EtcdProtobufWire.watchResponse([0x5A, 0x02, 0x08, 0x02][...])
        }
        #expect(throws: EtcdWire.Malformed.self) { try EtcdProtobufWire.watchResponse([0x38, 0x01][...]) }
        #expect(throws: EtcdWire.Malformed.self) { try EtcdProtobufWire.watchResponse([0x58, 0x01][...]) }
    }

    /// A stream of messages is cut into them whatever its chunks: every split of three messages
    /// into two chunks, and one byte at a time.
    @Test func aStreamIsCutIntoItsMessagesWhereverItsChunksEnd() throws {
        let messages: [[UInt8]] = [Self.watchAnswer().bytes, [], Array(repeating: 9, count: 300)]
        let stream = messages.flatMap(GRPCFraming.framed)
        for cut in 0...stream.count {
            var splitter = GRPCMessageSplitter()
            let read = try splitter.append(stream[..<cut]) + splitter.append(stream[cut...])
            #expect(read.map(Array.init) == messages, "cut at \(cut)")
            #expect(!splitter.hasPartialMessage)
        }
        // Between messages nothing waits; inside one, its bytes do.
        let boundaries = Set(messages.indices.map { messages[...$0].reduce(0) { $0 + 5 + $1.count } })
        var splitter = GRPCMessageSplitter()
        var read: [[UInt8]] = []
        for (index, byte) in stream.enumerated() {
            read += try splitter.append([byte]).map(Array.init)
            #expect(splitter.hasPartialMessage == !boundaries.contains(index + 1), "after byte \(index)")
        }
        #expect(read == messages)
        // A compressed message, which was not asked for; a length over the limit, refused from
        // its prefix alone, before its bytes are waited for.
        var compressed = GRPCMessageSplitter()
        #expect(throws: GRPCMessageSplitter.Failure.compressed) { try compressed.append([1, 0, 0, 0, 1, 7]) }
        var small = GRPCMessageSplitter(maximumMessageBytes: 16)
        #expect(try small.append(GRPCFraming.framed(Array(repeating: 1, count: 16))).count == 1)
        #expect(throws: GRPCMessageSplitter.Failure.tooLarge(17)) { try small.append([0, 0, 0, 0, 17]) }
        var huge = GRPCMessageSplitter()
        #expect(throws: GRPCMessageSplitter.Failure.tooLarge(Int(UInt32.max))) {
            try huge.append([0, 0xFF, 0xFF, 0xFF, 0xFF])
        }
    }

    @Test func varintsAndFramesAreTheWireFormats() throws {
        var writer = ProtobufWriter()
        writer.int64(1, 300)
        writer.int64(2, -1)
        writer.bool(3, true)
        writer.string(4, "a")
        #expect(
            writer.bytes == [0x08, 0xAC, 0x02, 0x10] + Array(repeating: 0xFF, count: 9) + [
                0x01, 0x18, 0x01, 0x22, 0x01, 0x61,
            ])
        var reader = ProtobufReader(writer.bytes[...])
        #expect(try reader.next()?.value.int64("") == 300)
        #expect(try reader.next()?.value.int64("") == -1)
        #expect(try reader.next()?.value.bool("") == true)
        #expect(try reader.next().map { Array(try $0.value.bytes("")) } == [0x61])
        #expect(try reader.next() == nil)
        // A field of 2,000 bytes takes a length of two bytes; fixed-width fields are skipped.
        var long = ProtobufWriter()
        long.bytes(5, Data(repeating: 7, count: 2_000))
        #expect(long.bytes.prefix(3) == [0x2A, 0xD0, 0x0F])
        let skipped: [UInt8] = [0x09] + Array(repeating: 0, count: 8) + [0x15, 1, 2, 3, 4] + [0x18, 0x01]
        var mixed = ProtobufReader(skipped[...])
        #expect(try mixed.next()?.field == 1)
        #expect(try mixed.next()?.field == 2)
        #expect(try mixed.next()?.value.bool("") == true)
        #expect(GRPCFraming.framed([1, 2, 3]) == [0, 0, 0, 0, 3, 1, 2, 3])
        #expect(try Array(GRPCFraming.message(in: [0, 0, 0, 0, 2, 9, 9])) == [9, 9])
        #expect(
            GRPCFraming.percentDecoded("etcdserver: too %25 large %E2%9C%93 %zz %4")
                == "etcdserver: too % large ✓ %zz %4")
    }

    @Test func statusLinesAreReadFromHeaderBytesInAnyCase() {
        func read(_ line: String) -> GRPCFraming.StatusLine? {
            Array(line.utf8).withUnsafeBytes { GRPCFraming.statusLine($0) }
        }
        #expect(read("grpc-status: 0\r\n") == .status(0))
        #expect(read("Grpc-Status:14\r\n") == .status(14))
        #expect(read("GRPC-STATUS: \t 7 \r\n") == .status(7))
        #expect(read("grpc-status: 1x\r\n") == .status(-1))
        #expect(read("grpc-status: \r\n") == .status(-1))
        #expect(read("grpc-status: 99999999999999999999\r\n") == .status(-1))
        #expect(
            read("grpc-message: etcdserver: request is too large%E2%9C%93\r\n")
                == .message("etcdserver: request is too large✓"))
        #expect(read("grpc-message:\r\n") == .message(""))
        // Other lines, and names that only look alike.
        for other in [
            "HTTP/2 200\r\n", "\r\n", "", "content-type: application/grpc\r\n",
            "grpc-status-details-bin: AA\r\n",
            "grpc-statu: 0\r\n", "grpc\rstatus: 0\r\n", "grpc-status 0\r\n", " grpc-status: 0\r\n",
            "grpc-encoding: gzip\r\n",
        ] {
            #expect(read(other) == nil, "\(other.debugDescription)")
        }
        // Any bytes: read or refused, never a crash.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            var bytes = Array("grpc-status: 0\r\n".utf8)
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                in: 0...255, using: &generator)
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            _ = bytes.withUnsafeBytes { GRPCFraming.statusLine($0) }
        }
    }

    @Test func answersCutShortOrMadeUpThrowAndNeverCrash() throws {
        // A TxnResponse as etcd writes one: a header, succeeded, a range of one kv and a put.
        var kv = ProtobufWriter()
        kv.string(1, "k")
        kv.int64(2, 5)
        kv.int64(3, 6)
        kv.int64(4, 2)
        kv.bytes(5, Data([0, 1, 2]))
        var answer = ProtobufWriter()
        answer.message(1) { $0.int64(3, 9) }
        answer.bool(2, true)
        answer.message(3) { operation in
            operation.message(1) { range in
                range.message(1) { $0.int64(3, 9) }
                range.bytes(2, Data(kv.bytes))
                range.int64(4, 1)
            }
        }
        answer.message(3) { $0.message(2) { $0.message(1) { $0.int64(3, 9) } } }
        let decoded = try EtcdProtobufWire.txnResponse(answer.bytes[...])
        #expect(decoded.succeeded && decoded.revision == 9 && decoded.results.count == 2)
        guard case .range(let range) = decoded.results.first, case .put = decoded.results.last else {
            Issue.record("not a range and a put: \(decoded.results)")
            return
        }
        #expect(range.count == 1 && range.revision == 9 && !range.more)
        #expect(
            range.kvs == [
                EtcdKeyValue(key: "k", value: Data([0, 1, 2]), createRevision: 5, modRevision: 6, version: 2)
            ])
        // Every cut of it is a whole answer or an error, and so is every byte changed.
        for length in 0..<answer.bytes.count {
            _ = try? EtcdProtobufWire.txnResponse(answer.bytes[..<length])
        }
        var random = SplitMix64(seed: 3)
        for _ in 0..<5_000 {
            var bytes = answer.bytes
            bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            _ = try? EtcdProtobufWire.txnResponse(bytes[...])
            let noise = (0..<Int.random(in: 0...64, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? EtcdProtobufWire.txnResponse(noise[...])
        }
        // What etcd never sends is named.
        #expect(throws: EtcdWire.Malformed.self) { try EtcdProtobufWire.txnResponse([0x1A, 0x00][...]) }
        #expect(throws: EtcdWire.Malformed.self) { try EtcdProtobufWire.txnResponse([0x10][...]) }
        #expect(throws: EtcdWire.Malformed.self) {
            try EtcdProtobufWire.txnResponse([0x0A, 0x05, 0x18][...])
        }
        // A key that is not UTF-8 is read, its bytes kept: it failed every answer that held it.
        let foreign = try EtcdProtobufWire.keyValue([0x0A, 0x01, 0xFF][...])
        #expect(foreign.key == "\u{FFFD}" && foreign.keyBytes == [0xFF])
        #expect(try EtcdProtobufWire.keyValue([0x0A, 0x01, 0x61][...]).keyBytes == nil)
        #expect(throws: EtcdWire.Malformed.self) { try GRPCFraming.message(in: [0, 0, 0, 0, 3, 1]) }
        #expect(throws: EtcdWire.Malformed.self) { try GRPCFraming.message(in: [1, 0, 0, 0, 1, 1]) }
    }
}
