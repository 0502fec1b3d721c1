import CountriesCore
import CountriesStore
import Etcd
import Foundation

/// A value that may be bigger than one etcd request (the whole list: up to about 4.2 MB of
/// JSON, a third more in base64), kept as chunks under keys of their own and a small pointer
/// key that names them (docs/HA.md, "What is in etcd"). Used for the snapshot and the seed.
///
/// A writer puts the chunks under a fresh token, each chunk in a transaction of its own (each
/// far under the request budget), then switches the pointer to them in one small transaction,
/// which also deletes every other token's chunks: the previous value's, and those of a writer
/// that lost a race or died half way. A reader reads the pointer and then the chunks at the
/// pointer's revision, so it never mixes two values. Whoever switches must have read the pointer
/// before writing its chunks and compare its revision: a switch that deletes a slower writer's
/// chunks also moves the pointer, so that writer's own switch fails and it writes nothing.
struct EtcdBlob: Sendable {
    /// Most bytes of the value in one chunk: 384 KiB (512 KiB in base64 when the gateway reads
    /// it back), well under the per-transaction budget (``EtcdStore/requestBudget``).
    static let chunkBytes = 384 * 1024
    /// Chunks read per range: a page stays under about 2 MiB of base64.
    static let chunksPerPage = 3
    /// Most bytes a value may have: twice the largest list's encoding (a reset of the longest
    /// list, ``CountriesCore/EventShape/maximumBodyBytes``); a pointer naming more is damage.
    static let maximumBytes = 2 * EventShape.maximumBodyBytes

    /// The key that names the chunks (or, in a store from before chunks, holds the value).
    let pointerKey: String
    /// Where the chunks live: `<chunksPrefix><token>/<index, 6 digits>`.
    let chunksPrefix: String

    /// What the pointer says: whose chunks, how many, how many bytes in all, and the seq of the
    /// value (a snapshot's; 0 for the seed).
    struct Pointer: Equatable, Sendable {
        var token: String
        var chunks: Int
        var bytes: Int
        var seq: UInt64

        /// `blob TOKEN CHUNKS BYTES SEQ`: plain text, never a JSON event, so a value from
        /// before chunks (an event, starting with `{`) is told apart.
        var encoded: Data { Data("blob \(token) \(chunks) \(bytes) \(seq)".utf8) }

        init(token: String, chunks: Int, bytes: Int, seq: UInt64) {
            self.token = token
            self.chunks = chunks
            self.bytes = bytes
            self.seq = seq
        }

        /// The pointer a value holds; nil when it is not one.
        init?(_ value: Data) {
            let parts = String(decoding: value, as: UTF8.self).split(separator: " ")
            guard parts.count == 5, parts[0] == "blob", StoreIdentity.isWellFormed(String(parts[1])),
                let chunks = Int(parts[2]), let bytes = Int(parts[3]), let seq = UInt64(parts[4]),
                chunks >= 0, bytes >= 0
            else { return nil }
            self.init(token: String(parts[1]), chunks: chunks, bytes: bytes, seq: seq)
        }
    }

    /// What the pointer key holds.
    enum Stored: Equatable {
        /// Nothing: the key does not exist.
        case absent
        /// The value itself (a store from before chunks), at the key's mod revision.
        case whole(Data, modRevision: Int64)
        /// The value in chunks, put together, at the pointer's mod revision.
        case chunked(Data, Pointer, modRevision: Int64)

        /// The value, when there is one.
        var value: Data? {
            switch self {
            case .absent: return nil
            case .whole(let value, _), .chunked(let value, _, _): return value
            }
        }

        /// The pointer key's mod revision (0 when absent): what a switch compares.
        var modRevision: Int64 {
            switch self {
            case .absent: return 0
            case .whole(_, let revision), .chunked(_, _, let revision): return revision
            }
        }
    }

    /// `value` cut into chunks of at most ``chunkBytes`` (none for an empty value).
    static func chunks(of value: Data, size: Int = chunkBytes) -> [Data] {
        stride(from: 0, to: value.count, by: size).map {
            Data(value[(value.startIndex + $0)..<(value.startIndex + min($0 + size, value.count))])
        }
    }

    /// The key of chunk `index` of `token`'s value.
    func chunkKey(_ token: String, _ index: Int) -> String {
        let digits = String(index)
        return chunksPrefix + token + "/" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// Writes `value`'s chunks under `token` (one transaction each) and returns the pointer to
    /// them; nothing points at them until a switch (``switchOperations(to:)``) does.
    func writeChunks(_ value: Data, token: String, seq: UInt64, client: EtcdClient) throws(EtcdError)
        -> Pointer
    {
        let chunks = Self.chunks(of: value)
        for (index, chunk) in chunks.enumerated() {
            _ = try client.txn(compare: [], success: [.put(chunkKey(token, index), chunk)], failure: [])
        }
        return Pointer(token: token, chunks: chunks.count, bytes: value.count, seq: seq)
    }

    /// The operations that make the pointer name `pointer`'s chunks and delete every other
    /// token's, for a transaction whose compare makes sure nobody switched it since it was read
    /// (the put first: without it, the deletes sweep up chunks nothing points at).
    func switchOperations(to pointer: Pointer) -> [EtcdOperation] {
        let own = chunksPrefix + pointer.token + "/"
        return [
            .put(pointerKey, pointer.encoded),
            .deleteRange(key: chunksPrefix, rangeEnd: own),
            .deleteRange(
                key: EtcdRangeRequest.prefixEnd(own), rangeEnd: EtcdRangeRequest.prefixEnd(chunksPrefix)),
        ]
    }

    /// Deletes the chunks of `token` (a writer whose switch failed).
    func discard(token: String, client: EtcdClient) throws(EtcdError) {
        let own = chunksPrefix + token + "/"
        _ = try client.txn(
            compare: [], success: [.deleteRange(key: own, rangeEnd: EtcdRangeRequest.prefixEnd(own))],
            failure: [])
    }

    /// Writes `value` and switches the pointer to it, unless the pointer moved since
    /// `expected` (its mod revision, 0 for absent) was read, or one of `conditions` fails;
    /// false, with the chunks deleted again, when it did.
    func replace(
        expected: Int64, with value: Data, seq: UInt64, conditions: [EtcdCompare] = [], client: EtcdClient
    ) throws(EtcdError) -> Bool {
        let token = StoreIdentity.make()
        let pointer = try writeChunks(value, token: token, seq: seq, client: client)
        let compare: EtcdCompare =
            expected == 0
            ? .createRevision(pointerKey, equals: 0) : .modRevision(pointerKey, equals: expected)
        let result = try client.txn(
            compare: [compare] + conditions, success: switchOperations(to: pointer), failure: [])
        if !result.succeeded { try discard(token: token, client: client) }
        return result.succeeded
    }

    /// The value as stored: the pointer, then its chunks at the pointer's revision, page by page;
    /// with the revision it was read at.
    func read(client: EtcdClient) throws(EtcdReadFailure) -> (stored: Stored, revision: Int64) {
        let head: EtcdRangeResponse
        do {
            head = try client.range(EtcdRangeRequest(key: pointerKey))
        } catch {
            throw .etcd(error)
        }
        guard let kv = head.kvs.first else { return (.absent, head.revision) }
        guard let pointer = Pointer(kv.value) else {
            return (.whole(kv.value, modRevision: kv.modRevision), head.revision)
        }
        // The pointer is read from etcd: its sizes bound what is read, not the other way round
        // (a pointer of Int.max bytes failed to allocate; extra chunks were all appended first).
        guard pointer.bytes <= Self.maximumBytes else {
            throw .incomplete(
                "\(pointerKey) names \(pointer.bytes) bytes, more than any list or seed takes (\(Self.maximumBytes))"
            )
        }
        var value = Data(capacity: pointer.bytes)
        var count = 0
        let own = chunksPrefix + pointer.token + "/"
        var request: EtcdRangeRequest? = .prefix(own, limit: Self.chunksPerPage, revision: head.revision)
        while let current = request {
            let page: EtcdRangeResponse
            do {
                page = try client.range(current)
            } catch {
                throw .etcd(error)
            }
            for chunk in page.kvs {
                guard count < pointer.chunks, value.count + chunk.value.count <= pointer.bytes else {
                    throw .incomplete(
                        "\(pointerKey) names \(pointer.chunks) chunks of \(pointer.bytes) bytes, but more are there"
                    )
                }
                guard chunk.key == chunkKey(pointer.token, count) else {
                    throw .incomplete(
                        "\(pointerKey) names \(pointer.chunks) chunks, but \(chunkKey(pointer.token, count)) is missing"
                    )
                }
                value.append(chunk.value)
                count += 1
            }
            request = current.next(after: page)
        }
        guard count == pointer.chunks, value.count == pointer.bytes else {
            throw .incomplete(
                "\(pointerKey) names \(pointer.chunks) chunks of \(pointer.bytes) bytes, but \(count) chunks of \(value.count) bytes are there"
            )
        }
        return (.chunked(value, pointer, modRevision: kv.modRevision), head.revision)
    }
}

/// Why a value kept in chunks could not be read.
enum EtcdReadFailure: Error, CustomStringConvertible {
    /// etcd did not answer, or refused.
    case etcd(EtcdError)
    /// The chunks the pointer names are not all there (someone deleted keys by hand).
    case incomplete(String)

    var description: String {
        switch self {
        case .etcd(let error): return "\(error)"
        case .incomplete(let why): return why
        }
    }
}
