import CCurl
import Foundation
import JSON
import TestSupport
import Testing

@testable import Etcd

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Transactions go over etcd's gRPC API, everything else through its JSON gateway: the same
/// transaction must read the same both ways, against a real etcd.
@Suite(.enabled(if: EtcdCluster.isAvailable, "etcd is not installed (scripts/bootstrap)"))
struct EtcdGRPCTests {
    /// `compare`, `success` and `failure` through the gateway's JSON, as the client sent every
    /// transaction before gRPC: the request as `EtcdWireTests.Reference` writes it.
    private func gatewayTxn(
        _ client: EtcdClient, _ compare: [EtcdCompare], _ success: [EtcdOperation], _ failure: [EtcdOperation]
    ) throws -> EtcdTxnResponse {
        let body = EtcdWireTests.Reference.txn(compare: compare, success: success, failure: failure)
        let (fields, _) = try client.call("/v3/kv/txn", body, .read, requireLeader: true)
        return try Self.txnResponse(fields)
    }

    /// The gateway's answer to a transaction, read as the client read it before gRPC.
    private static func txnResponse(_ fields: [String: JSONValue]) throws -> EtcdTxnResponse {
        var results: [EtcdOperationResult] = []
        for element in try EtcdWire.array(fields, "responses") {
            guard case .object(let response) = element, response.count == 1,
                let (kind, body) = response.first,
                case .object(let inner) = body
            else { throw EtcdWire.Malformed("a txn response is not an object of one operation") }
            switch kind {
            case "response_range": results.append(.range(try EtcdWire.rangeResponse(inner)))
            case "response_put": results.append(.put)
            case "response_delete_range":
                results.append(.deleteRange(deleted: try EtcdWire.int64(inner, "deleted")))
            default: throw EtcdWire.Malformed("a txn response of an unknown kind: \(kind)")
            }
        }
        return EtcdTxnResponse(
            succeeded: try EtcdWire.bool(fields, "succeeded"), revision: try EtcdWire.revision(fields),
            results: results)
    }

    @Test func aReadOnlyTxnAnswersTheSameOverGRPCAndTheGateway() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        for index in 0..<5 {
            _ = try client.txn(
                compare: [], success: [.put("p/\(index)", Data((0...UInt8(index * 50)).map { $0 }))],
                failure: [])
        }
        _ = try client.txn(
            compare: [], success: [.put("p/2", Data("again".utf8)), .put("q", Data())], failure: [])
        let ranges: [EtcdOperation] = [
            .range(.prefix("p/")),
            .range(
                EtcdRangeRequest(
                    key: "p/", rangeEnd: "p0", limit: 2, sortTarget: .modRevision, sortOrder: .descending)),
            .range(EtcdRangeRequest(key: "p/", rangeEnd: "p0", keysOnly: true)),
            .range(EtcdRangeRequest(key: "p/", rangeEnd: "p0", countOnly: true)),
            .range(EtcdRangeRequest(key: "q")),
            .range(EtcdRangeRequest(key: "absent")),
            .range(EtcdRangeRequest(key: "p/1", revision: 3)),
        ]
        for compare in [[EtcdCompare.version("p/2", equals: 2)], [.version("p/2", equals: 1)]] {
            let overGRPC = try client.txn(
                compare: compare, success: ranges, failure: Array(ranges.reversed()))
            let overGateway = try gatewayTxn(client, compare, ranges, Array(ranges.reversed()))
            #expect(overGRPC.results.count == ranges.count)
            #expect(String(describing: overGRPC) == String(describing: overGateway))
        }
    }

    @Test func writesAnswerTheSameOverGRPCAndTheGateway() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let lease = try client.grantLease(ttlSeconds: 60)
        // Revisions past any count or version below, so one can be replaced by the other.
        for _ in 0..<10 { _ = try client.txn(compare: [], success: [.put("filler", Data())], failure: []) }
        let writes: (String) -> [EtcdOperation] = { prefix in
            [
                .put("\(prefix)/a", Data([0, 255])),
                .putLeased("\(prefix)/b", Data("b".utf8), lease: lease.id),
                .deleteRange(key: "\(prefix)/c", rangeEnd: nil),
                .deleteRange(key: "\(prefix)/d", rangeEnd: "\(prefix)/e"), .range(.prefix("\(prefix)/")),
            ]
        }
        let overGRPC = try client.txn(
            compare: [.createRevision("g/a", equals: 0)], success: writes("g"), failure: [])
        let overGateway = try gatewayTxn(client, [.createRevision("j/a", equals: 0)], writes("j"), [])
        #expect(overGRPC.succeeded && overGateway.succeeded)
        #expect(overGateway.revision == overGRPC.revision + 1)
        // The same but for the keys' prefix and the revision each was at.
        let shifted = String(describing: overGRPC)
            .replacingOccurrences(of: ": \(overGRPC.revision)", with: ": \(overGateway.revision)")
            .replacingOccurrences(of: "\"g/", with: "\"j/")
        #expect(shifted == String(describing: overGateway))
    }

    /// A read-only transaction of one range, framed for gRPC.
    private static let framedRead = GRPCFraming.framed(
        EtcdProtobufWire.txn(compare: [], success: [.range(EtcdRangeRequest(key: "k"))], failure: []))

    /// One connection to each endpoint, reused call after call, whichever endpoint came before
    /// (libcurl 7.88 fails a prior-knowledge transfer on a connection it reuses: ``CurlTransfer``).
    @Test func eachEndpointKeepsItsConnectionWhateverCameBefore() throws {
        let cluster = try EtcdCluster(members: 3)
        let transfer = try #require(
            CurlTransfer(connectTimeout: .seconds(1), headers: [], wire: .grpc))
        var opened: [Int] = []
        for endpoint in [0, 1, 0, 0, 1, 2, 1, 0, 2] {
            let outcome = transfer.grpcCall(
                endpoint: cluster.clientURLs[endpoint], method: "/etcdserverpb.KV/Txn", body: Self.framedRead,
                requireLeader: true, timeout: .seconds(5))
            #expect(outcome.result == CURLE_OK && outcome.grpcStatus == 0 && outcome.httpMajorVersion == 2)
            opened.append(outcome.newConnections)
        }
        #expect(opened == [1, 1, 0, 0, 0, 1, 0, 0, 0])
    }

    /// A connection keeps its answer buffer for the next answer only while it is small: the
    /// buffer of one large answer stayed with it for the life of the process (here 8 MiB of
    /// values, a snapshot's pages are as large), on each of a replica's connections.
    @Test func aLargeAnswersBufferIsNotKeptForTheNext() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs, timeout: .seconds(10) * testSlowdown)
        for index in 0..<8 {
            _ = try client.txn(
                compare: [], success: [.put("big/\(index)", Data(repeating: 0x61, count: 1 << 20))],
                failure: [])
        }
        let transfer = try #require(CurlTransfer(connectTimeout: .seconds(1), headers: [], wire: .grpc))
        let readAll = GRPCFraming.framed(
            EtcdProtobufWire.txn(compare: [], success: [.range(.prefix("big/"))], failure: []))
        let large = transfer.grpcCall(
            endpoint: cluster.clientURLs[0], method: "/etcdserverpb.KV/Txn", body: readAll,
            requireLeader: true,
            timeout: .seconds(10) * testSlowdown)
        #expect(large.result == CURLE_OK && large.body.count > 8 << 20)
        #expect(transfer.exchange.received.capacity > 8 << 20)
        let small = transfer.grpcCall(
            endpoint: cluster.clientURLs[0], method: "/etcdserverpb.KV/Txn", body: Self.framedRead,
            requireLeader: true, timeout: .seconds(5) * testSlowdown)
        #expect(small.result == CURLE_OK)
        #expect(transfer.exchange.received.capacity <= CurlTransfer.Exchange.keptBufferBytes)
    }

    /// A call that timed out on a hung member leaves the client able to call again once the
    /// member answers (libcurl 7.88 fails every later stream on a connection whose stream timed
    /// out, unless the connection is dropped).
    @Test func aTimeoutLeavesTheNextTxnANewConnection() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs, timeout: .milliseconds(500))
        _ = try client.txn(compare: [], success: [.put("before", Data())], failure: [])
        let pid = try #require(cluster.pid(of: 0))
        var stopped = true
        defer { if stopped { kill(pid, SIGCONT) } }
        try #require(pauseProcess(pid))
        do {
            _ = try client.txn(compare: [], success: [.put("during", Data())], failure: [])
            Issue.record("a txn to a stopped member was answered")
        } catch {
            #expect(error.code == .outcomeUnknown, "\(error)")
        }
        kill(pid, SIGCONT)
        stopped = false
        let after = try client.txn(compare: [], success: [.put("after", Data())], failure: [])
        #expect(after.succeeded)
    }

    /// A member that restarted closed the connection: the next call opens another and goes
    /// through, once.
    @Test func aTxnAfterTheMemberRestartedGoesThrough() throws {
        let cluster = try EtcdCluster(members: 1)
        let client = EtcdClient(endpoints: cluster.clientURLs)
        _ = try client.txn(compare: [], success: [.put("before", Data())], failure: [])
        try cluster.restart(member: 0)
        let after = try client.txn(
            compare: [.version("after", equals: 0)], success: [.put("after", Data("1".utf8))], failure: [])
        #expect(after.succeeded)
        #expect(try client.range(EtcdRangeRequest(key: "after")).kvs.first?.version == 1)
    }
}
