import CountriesCore
import Etcd
import Foundation
import TestSupport
import Testing

@testable import CountriesReplication
@testable import CountriesStore

/// A value bigger than one etcd request, kept as chunks and a pointer (``EtcdBlob``): cut and
/// put back together, switched by compare-and-swap, and no chunks left behind by a writer that
/// lost or by the value it replaced.
@Suite(.serialized)
struct EtcdBlobTests {
    private let blob = EtcdBlob(pointerKey: "/b/snapshot", chunksPrefix: "/b/chunks/snapshot/")

    /// Bytes that are not all the same, so a chunk out of place shows.
    private func value(_ count: Int, salt: UInt8 = 0) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(salt)) })
    }

    @Test func chunksCutAValueAndPutItBackTogether() {
        #expect(EtcdBlob.chunks(of: Data()).isEmpty)
        let exact = value(3 * EtcdBlob.chunkBytes)
        #expect(EtcdBlob.chunks(of: exact).map(\.count) == Array(repeating: EtcdBlob.chunkBytes, count: 3))
        let odd = value(2 * EtcdBlob.chunkBytes + 17)
        let chunks = EtcdBlob.chunks(of: odd)
        #expect(chunks.map(\.count) == [EtcdBlob.chunkBytes, EtcdBlob.chunkBytes, 17])
        #expect(chunks.reduce(Data(), +) == odd)
        // A slice, as values often are: indices from its own start.
        let slice = odd[5...]
        #expect(EtcdBlob.chunks(of: slice, size: 1000).reduce(Data(), +) == Data(slice))
    }

    @Test func aPointerIsToldApartFromAValueInFull() throws {
        let pointer = EtcdBlob.Pointer(token: StoreIdentity.make(), chunks: 11, bytes: 4_200_000, seq: 300)
        #expect(EtcdBlob.Pointer(pointer.encoded) == pointer)
        let event = Event(seq: 3, kind: .reset([]), store: StoreIdentity.make()).encoded()
        #expect(EtcdBlob.Pointer(event) == nil)
        #expect(EtcdBlob.Pointer(Data("blob x 1 2 3".utf8)) == nil, "a token is 32 hex digits")
        // Every chunk key of a token sorts under it, in order.
        #expect(blob.chunkKey("t", 7) == "/b/chunks/snapshot/t/000007")
    }

    @Test(.enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
    func aReplaceSwitchesThePointerAndDeletesEveryOtherChunk() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let client = EtcdClient(endpoints: cluster.clientURLs)
        #expect(try blob.read(client: client).stored == .absent)
        // Bigger than etcd takes in one request (1.5 MiB), and than one page of chunks.
        let first = value(5_000_000)
        #expect(try blob.replace(expected: 0, with: first, seq: 100, client: client))
        let read = try blob.read(client: client).stored
        #expect(read.value == first)
        guard case .chunked(_, let pointer, let revision) = read else {
            Issue.record("not kept in chunks: \(read)")
            return
        }
        #expect(pointer.chunks == 13 && pointer.seq == 100)
        // A writer that died half way left chunks of its own.
        _ = try blob.writeChunks(value(1000), token: StoreIdentity.make(), seq: 150, client: client)
        let second = value(900_000, salt: 7)
        #expect(try blob.replace(expected: revision, with: second, seq: 200, client: client))
        #expect(try blob.read(client: client).stored.value == second)
        let left = try client.range(.prefix(blob.chunksPrefix, keysOnly: true))
        #expect(left.kvs.count == 3, "only the current value's chunks: \(left.kvs.map(\.key))")
        // A writer that read the pointer before that switch loses and deletes its own chunks.
        #expect(!(try blob.replace(expected: revision, with: value(10), seq: 300, client: client)))
        #expect(try client.range(.prefix(blob.chunksPrefix, keysOnly: true)).kvs.count == 3)
        #expect(try blob.read(client: client).stored.value == second)
    }

    /// The pointer is read from etcd, where anyone who can write under the prefix can put one:
    /// one naming `Int.max` bytes failed to allocate, and chunks past the ones it names were
    /// all read into memory before they were counted. Both are damage now, named.
    @Test(.enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
    func aPointerBeyondAnyValueOrChunksBeyondItsOwnAreDamage() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let token = StoreIdentity.make()
        let huge = EtcdBlob.Pointer(token: token, chunks: 1, bytes: Int.max, seq: 5)
        _ = try client.txn(compare: [], success: [.put(blob.pointerKey, huge.encoded)], failure: [])
        #expect(throws: EtcdReadFailure.self) { _ = try blob.read(client: client) }

        let small = EtcdBlob.Pointer(token: token, chunks: 1, bytes: 10, seq: 5)
        _ = try client.txn(
            compare: [],
            success: [
                .put(blob.pointerKey, small.encoded), .put(blob.chunkKey(token, 0), value(10)),
                .put(blob.chunkKey(token, 1), value(10)),
            ], failure: [])
        #expect(throws: EtcdReadFailure.self) { _ = try blob.read(client: client) }
    }

    @Test(.enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
    func aValueFromBeforeChunksIsReadAsItIs() throws {
        let cluster = try EtcdCluster(members: 1)
        defer { cluster.stop() }
        let client = EtcdClient(endpoints: cluster.clientURLs)
        let whole = Event(seq: 400, kind: .reset([]), store: StoreIdentity.make()).encoded()
        _ = try client.txn(compare: [], success: [.put(blob.pointerKey, whole)], failure: [])
        guard case .whole(let value, let revision) = try blob.read(client: client).stored else {
            Issue.record("a value in full was not read as one")
            return
        }
        #expect(value == whole)
        // And it is replaced like any other.
        #expect(try blob.replace(expected: revision, with: value, seq: 500, client: client))
        #expect(try blob.read(client: client).stored.value == whole)
    }
}
