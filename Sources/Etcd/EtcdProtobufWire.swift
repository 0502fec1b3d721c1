import Foundation

/// etcd's gRPC messages, both ways: a `TxnRequest` and a watch's `WatchRequest` written from the
/// module's types, and a `TxnResponse` and the stream's `WatchResponse`s read into them. The
/// field numbers are etcd's (`etcdserverpb/rpc.proto`, `mvccpb/kv.proto`); docs/ARCHITECTURE.md
/// says why transactions and watches go over gRPC. Fields left out read as 0, false or empty,
/// as in ``EtcdWire``'s JSON.
enum EtcdProtobufWire {
    // MARK: Requests

    /// The `TxnRequest` of these compares and operations.
    static func txn(compare: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation]) -> [UInt8] {
        let valueBytes = success.valueBytes
        var writer = ProtobufWriter(
            capacity: 64 * (compare.count + success.count + failure.count + 1) + valueBytes)
        for condition in compare { writer.message(1) { write(condition, into: &$0) } }
        for operation in success { write(operation, field: 2, into: &writer) }
        for operation in failure { write(operation, field: 3, into: &writer) }
        return writer.bytes
    }

    /// `Compare`: result 1, target 2, key 3, and one of version 4, create_revision 5,
    /// mod_revision 6, value 7. The target's value is written even when 0: it is a oneof.
    private static func write(_ compare: EtcdCompare, into writer: inout ProtobufWriter) {
        // CompareResult: EQUAL 0, GREATER 1, LESS 2. CompareTarget: VERSION 0, CREATE 1, MOD 2,
        // VALUE 3.
        switch compare {
        case .value(let key, let bytes):
            writer.int64(2, 3)
            writer.string(3, key)
            writer.bytes(7, bytes)
        case .createRevision(let key, let revision):
            writer.int64(2, 1)
            writer.string(3, key)
            writer.int64(5, revision)
        case .modRevision(let key, let revision):
            writeModRevision(key, revision, result: 0, into: &writer)
        case .modRevisionLess(let key, let revision):
            writeModRevision(key, revision, result: 2, into: &writer)
        case .modRevisionGreater(let key, let revision):
            writeModRevision(key, revision, result: 1, into: &writer)
        case .version(let key, let version):
            writer.string(3, key)
            writer.int64(4, version)
        }
    }

    /// A `Compare` of the key's mod_revision (target MOD 2) by `result` (EQUAL 0 is left out).
    private static func writeModRevision(
        _ key: String, _ revision: Int64, result: Int64, into writer: inout ProtobufWriter
    ) {
        if result != 0 { writer.int64(1, result) }
        writer.int64(2, 2)
        writer.string(3, key)
        writer.int64(6, revision)
    }

    /// A `RequestOp` of a `PutRequest` in `field`: key 1, value 2, and lease 3 when given.
    private static func writePut(
        _ key: String, _ value: Data, lease: Int64?, field: Int, into writer: inout ProtobufWriter
    ) {
        let capacity = value.count + key.utf8.count + 24
        writer.message(field, capacity: capacity) { operation in
            operation.message(2, capacity: capacity) { put in
                put.string(1, key)
                put.bytes(2, value)
                if let lease { put.int64(3, lease) }
            }
        }
    }

    /// `RequestOp` in `field`: request_range 1, request_put 2, request_delete_range 3.
    private static func write(_ operation: EtcdOperation, field: Int, into writer: inout ProtobufWriter) {
        switch operation {
        case .range(let request):
            writer.message(field) { operation in operation.message(1) { write(request, into: &$0) } }
        case .put(let key, let value):
            writePut(key, value, lease: nil, field: field, into: &writer)
        case .putLeased(let key, let value, let lease):
            writePut(key, value, lease: lease, field: field, into: &writer)
        case .deleteRange(let key, let rangeEnd):
            writer.message(field) { operation in
                operation.message(3) { delete in
                    delete.string(1, key)
                    if let rangeEnd { delete.string(2, rangeEnd) }
                }
            }
        }
    }

    /// `RangeRequest`: key 1, range_end 2, limit 3, revision 4, sort_order 5, sort_target 6,
    /// serializable 7, keys_only 8, count_only 9.
    private static func write(_ request: EtcdRangeRequest, into writer: inout ProtobufWriter) {
        if let bytes = request.keyBytes {
            bytes.withUnsafeBytes { writer.bytes(1, $0) }
        } else {
            writer.string(1, request.key)
        }
        if let end = request.rangeEnd { writer.string(2, end) }
        if request.limit != 0 { writer.int64(3, Int64(request.limit)) }
        if request.revision != 0 { writer.int64(4, request.revision) }
        if request.sortOrder != .none { writer.int64(5, request.sortOrder.protobufNumber) }
        if request.sortTarget != .key { writer.int64(6, request.sortTarget.protobufNumber) }
        if request.serializable { writer.bool(7, true) }
        if request.keysOnly { writer.bool(8, true) }
        if request.countOnly { writer.bool(9, true) }
    }

    /// The `WatchRequest` that creates a watch of `request`'s key or range from `startRevision`
    /// (0: from now): create_request 1, a `WatchCreateRequest` of key 1, range_end 2 and
    /// start_revision 3.
    static func watchCreate(_ request: EtcdRangeRequest, startRevision: Int64) -> [UInt8] {
        var writer = ProtobufWriter(
            capacity: request.key.utf8.count + (request.rangeEnd?.utf8.count ?? 0) + 24)
        writer.message(1) { create in
            create.string(1, request.key)
            if let end = request.rangeEnd { create.string(2, end) }
            if startRevision != 0 { create.int64(3, startRevision) }
        }
        return writer.bytes
    }

    // MARK: Answers

    /// A `WatchResponse`: header 1, watch_id 2, created 3, canceled 4, compact_revision 5,
    /// cancel_reason 6, fragment 7, events 11.
    static func watchResponse(_ message: ArraySlice<UInt8>) throws(EtcdWire.Malformed) -> EtcdWatchResponse {
        var response = EtcdWatchResponse()
        var reader = ProtobufReader(message)
        while let (field, value) = try reader.next() {
            switch field {
            case 1: response.revision = try revision(value.bytes("header"))
            case 3: response.created = try value.bool("created")
            case 4: response.canceled = try value.bool("canceled")
            case 5: response.compactRevision = try value.int64("compact_revision")
            case 6: response.cancelReason = String(decoding: try value.bytes("cancel_reason"), as: UTF8.self)
            case 7:
                // Asked for by a create request's fragment flag, which this client never sets.
                if try value.bool("fragment") { throw EtcdWire.Malformed("a fragment of a watch answer") }
            case 11: response.events.append(try event(value.bytes("events")))
            default: break
            }
        }
        return response
    }

    /// An `Event` (`mvccpb/kv.proto`): type 1 (PUT 0, DELETE 1), kv 2, prev_kv 3.
    private static func event(_ message: ArraySlice<UInt8>) throws(EtcdWire.Malformed) -> EtcdWatchEvent {
        var kind = EtcdWatchEvent.Kind.put
        var kv = EtcdKeyValue(key: "", value: Data(), createRevision: 0, modRevision: 0, version: 0)
        var reader = ProtobufReader(message)
        while let (field, value) = try reader.next() {
            switch field {
            case 1:
                switch try value.int64("type") {
                case 0: kind = .put
                case 1: kind = .delete
                case let other: throw EtcdWire.Malformed("a watch event of an unknown type: \(other)")
                }
            case 2: kv = try keyValue(value.bytes("kv"))
            default: break
            }
        }
        return EtcdWatchEvent(kind: kind, kv: kv)
    }

    /// A `TxnResponse`: header 1, succeeded 2, responses 3.
    static func txnResponse(_ message: ArraySlice<UInt8>) throws(EtcdWire.Malformed) -> EtcdTxnResponse {
        var response = EtcdTxnResponse(succeeded: false, revision: 0, results: [])
        var reader = ProtobufReader(message)
        while let (field, value) = try reader.next() {
            switch field {
            case 1: response.revision = try revision(value.bytes("header"))
            case 2: response.succeeded = try value.bool("succeeded")
            case 3: response.results.append(try result(value.bytes("responses")))
            default: break
            }
        }
        return response
    }

    /// `ResponseHeader`'s revision (3).
    private static func revision(_ header: ArraySlice<UInt8>) throws(EtcdWire.Malformed) -> Int64 {
        try int64(field: 3, "revision", of: header)
    }

    /// The `int64` field `number` of `message` (its last, as proto3 reads a repeated scalar),
    /// 0 when it is left out.
    private static func int64(field number: Int, _ name: String, of message: ArraySlice<UInt8>)
        throws(EtcdWire.Malformed) -> Int64
    {
        var found: Int64 = 0
        var reader = ProtobufReader(message)
        while let (field, value) = try reader.next() {
            if field == number { found = try value.int64(name) }
        }
        return found
    }

    /// A `ResponseOp`: exactly one of response_range 1, response_put 2, response_delete_range 3.
    private static func result(_ message: ArraySlice<UInt8>) throws(EtcdWire.Malformed) -> EtcdOperationResult
    {
        var reader = ProtobufReader(message)
        var result: EtcdOperationResult?
        while let (field, value) = try reader.next() {
            let next: EtcdOperationResult
            switch field {
            case 1: next = .range(try rangeResponse(value.bytes("response_range")))
            case 2: next = .put
            case 3:
                // `DeleteRangeResponse`'s deleted (2).
                let response = try value.bytes("response_delete_range")
                next = .deleteRange(deleted: try int64(field: 2, "deleted", of: response))
            default: throw EtcdWire.Malformed("a txn response of an unknown kind: field \(field)")
            }
            guard result == nil else { throw EtcdWire.Malformed("a txn response of more than one operation") }
            result = next
        }
        guard let result else { throw EtcdWire.Malformed("a txn response of no operation") }
        return result
    }

    /// A `RangeResponse`: header 1, kvs 2, more 3, count 4.
    static func rangeResponse(_ message: ArraySlice<UInt8>) throws(EtcdWire.Malformed) -> EtcdRangeResponse {
        var response = EtcdRangeResponse(kvs: [], count: 0, more: false, revision: 0)
        var reader = ProtobufReader(message)
        while let (field, value) = try reader.next() {
            switch field {
            case 1: response.revision = try revision(value.bytes("header"))
            case 2: response.kvs.append(try keyValue(value.bytes("kvs")))
            case 3: response.more = try value.bool("more")
            case 4: response.count = try value.int64("count")
            default: break
            }
        }
        return response
    }

    /// A `KeyValue`: key 1, create_revision 2, mod_revision 3, version 4, value 5.
    static func keyValue(_ message: ArraySlice<UInt8>) throws(EtcdWire.Malformed) -> EtcdKeyValue {
        var kv = EtcdKeyValue(key: "", value: Data(), createRevision: 0, modRevision: 0, version: 0)
        var reader = ProtobufReader(message)
        while let (field, value) = try reader.next() {
            switch field {
            case 1:
                (kv.key, kv.keyBytes) = EtcdKeyValue.key(from: try value.bytes("key"))
            case 2: kv.createRevision = try value.int64("create_revision")
            case 3: kv.modRevision = try value.int64("mod_revision")
            case 4: kv.version = try value.int64("version")
            case 5: kv.value = Data(try value.bytes("value"))
            default: break
            }
        }
        return kv
    }
}

extension EtcdRangeRequest.SortOrder {
    /// `RangeRequest.SortOrder`'s number: NONE 0, ASCEND 1, DESCEND 2.
    var protobufNumber: Int64 {
        switch self {
        case .none: 0
        case .ascending: 1
        case .descending: 2
        }
    }
}

extension EtcdRangeRequest.SortTarget {
    /// `RangeRequest.SortTarget`'s number: KEY 0, VERSION 1, CREATE 2, MOD 3, VALUE 4.
    var protobufNumber: Int64 {
        switch self {
        case .key: 0
        case .version: 1
        case .createRevision: 2
        case .modRevision: 3
        case .value: 4
        }
    }
}
