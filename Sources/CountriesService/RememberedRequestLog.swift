import CountriesStore
import Foundation

/// The request ids a ``MemoryStore`` remembers, with what each change asked and its reply, kept
/// by ``RequestIDRetention``'s rule.
///
/// Each id is a record in one buffer of bytes, oldest first (its fingerprint, id, request and
/// reply): ids are forgotten oldest first, so forgetting moves the buffer's start. The records
/// are found through a table keyed by the id's fingerprint (its seeded 64-bit hash), which holds
/// no reference: at a store's most ids (100,000) a table keyed by the ids' strings compared and
/// rehashed strings out of cache on every insertion and removal, about a sixth of the service's
/// time per toggle (docs/BENCHMARKS.md, "Stop 49"). The id in the record settles the rare
/// fingerprint two ids share: the later one is kept in a small table by its string.
struct RememberedRequestLog {
    /// Where an id's record is, and the ordinal it was remembered at.
    struct Slot {
        var ordinal: Int64
        /// The record's position among every byte ever appended (`records[0]` is at `recordsBase`).
        var position: Int
    }

    /// A record's header: fingerprint, then the id's, the request's (``noRequest`` for none) and
    /// the reply's lengths.
    private static let headerWords = 4
    private static let headerBytes = headerWords * MemoryLayout<Int>.size
    private static let noRequest = -1
    /// The buffer's consumed start is cut off once it is this long and half the buffer: a copy
    /// of the live half at most once per as many bytes appended.
    private static let trimBytes = 1 << 20

    private let fingerprint: (String) -> UInt64
    private var slots: [UInt64: Slot] = [:]
    /// Ids whose fingerprint a live id had when they were remembered.
    private(set) var sharingFingerprint: [String: Slot] = [:]
    private var records: [UInt8] = []
    private var recordsBase = 0
    /// The position of the oldest record not forgotten.
    private var liveStart = 0
    private var lastOrdinal: Int64 = 0
    private var retention: RequestIDRetention
    /// Ids a maximum forgot while younger than the age floor
    /// (``RequestIDRetention/forgottenYoung``).
    var forgottenYoung: Int { retention.forgottenYoung }
    /// The last id looked up, with its fingerprint: a change's id is looked up just before it
    /// is staged and remembered once it commits, and hashing it a second time cost about 300
    /// instructions a toggle (docs/BENCHMARKS.md, "Stop 59").
    private var lastLookUp: (id: String, fingerprint: UInt64)?

    /// An empty log keeping ids by `retention`; `fingerprint` is for tests that make ids share one.
    init(
        retention: RequestIDRetention,
        fingerprint: @escaping (String) -> UInt64 = { UInt64(bitPattern: Int64($0.hashValue)) }
    ) {
        self.retention = retention
        self.fingerprint = fingerprint
    }

    /// Ids kept (some may wait for the next commit to be forgotten).
    var count: Int { retention.count }
    /// Bytes of the buffer, consumed start included.
    var bufferBytes: Int { records.count }

    /// The request remembered under `id`, if it is still kept at `now` (read only when `id` is
    /// found: a new id, every change's, needs no clock).
    mutating func request(for id: String, nowMilliseconds now: @autoclosure () -> Int64) -> RememberedRequest?
    {
        let print = fingerprint(id)
        lastLookUp = (id, print)
        guard let slot = slot(for: id, fingerprint: print),
            retention.keeps(ordinal: slot.ordinal, nowMilliseconds: now())
        else { return nil }
        return records.withUnsafeBytes { buffer in
            let record = Record(buffer, at: slot.position - recordsBase)
            return RememberedRequest(
                id: id, request: record.request.map { Array(buffer[$0]) }, reply: Array(buffer[record.reply]))
        }
    }

    /// Remembers `request` as committed at `now` (a later one under the same id replaces it).
    mutating func remember(_ request: RememberedRequest, nowMilliseconds now: Int64) {
        lastOrdinal += 1
        let slot = Slot(ordinal: lastOrdinal, position: recordsBase + records.count)
        let print: UInt64
        if let lastLookUp, lastLookUp.id == request.id {
            print = lastLookUp.fingerprint
        } else {
            print = fingerprint(request.id)
        }
        // Let go of it now: kept until the next look-up, the id was freed there, before that
        // request's reply.
        lastLookUp = nil
        if !sharingFingerprint.isEmpty, sharingFingerprint[request.id] != nil {
            sharingFingerprint[request.id] = slot
        } else if let other = slots.updateValue(slot, forKey: print),
            !recordHasID(request.id, at: other.position)
        {
            // Another id has this fingerprint: it keeps the table's slot.
            slots[print] = other
            sharingFingerprint[request.id] = slot
        }
        var id = request.id
        id.withUTF8 { idBytes in
            let header = (
                Int(bitPattern: UInt(print)), idBytes.count, request.request?.count ?? Self.noRequest,
                request.reply.count
            )
            appendRecord(header, UnsafeRawBufferPointer(idBytes), request.request, request.reply)
        }
        retention.remember(ordinal: lastOrdinal, bytes: request.bytes, milliseconds: now)
    }

    /// Forgets the ids the rule lets go at `now`, and the bytes of their records.
    mutating func forgetExpired(nowMilliseconds now: Int64) {
        let (forgettable, _) = retention.forgettable(nowMilliseconds: now)
        guard forgettable > 0 else { return }
        _ = retention.forget(forgettable, nowMilliseconds: now)
        for _ in 0..<forgettable {
            let position = liveStart
            let record = records.withUnsafeBytes { Record($0, at: position - recordsBase) }
            liveStart += record.length
            // Unless the id was remembered again since, at another position.
            if let slot = slots[record.fingerprint], slot.position == position {
                slots[record.fingerprint] = nil
            } else if !sharingFingerprint.isEmpty {
                let id = records.withUnsafeBytes { String(decoding: $0[record.id], as: UTF8.self) }
                if sharingFingerprint[id]?.position == position { sharingFingerprint[id] = nil }
            }
        }
        let consumed = liveStart - recordsBase
        if consumed == records.count {
            records.removeAll(keepingCapacity: records.count <= Self.trimBytes)
            recordsBase = liveStart
        } else if consumed >= Self.trimBytes, consumed * 2 >= records.count {
            records.removeFirst(consumed)
            recordsBase = liveStart
        }
    }

    private func slot(for id: String, fingerprint print: UInt64) -> Slot? {
        if let slot = slots[print], recordHasID(id, at: slot.position) { return slot }
        return sharingFingerprint.isEmpty ? nil : sharingFingerprint[id]
    }

    private func recordHasID(_ id: String, at position: Int) -> Bool {
        var id = id
        return id.withUTF8 { wanted in
            records.withUnsafeBytes { buffer in
                let record = Record(buffer, at: position - recordsBase)
                return buffer[record.id].elementsEqual(UnsafeRawBufferPointer(wanted))
            }
        }
    }

    /// The longest record gathered before it is appended; a longer one (a `reset`'s reply holds
    /// the whole list) is appended part by part rather than copied twice.
    private static let gatheredRecordBytes = 1_024

    /// Appends a record. A short one (every toggle's) is gathered on the stack first and
    /// appended once: appended part by part, each of its four parts cost about 180 instructions
    /// (docs/BENCHMARKS.md, "Stop 60").
    private mutating func appendRecord(
        _ header: (Int, Int, Int, Int), _ id: UnsafeRawBufferPointer, _ request: [UInt8]?, _ reply: [UInt8]
    ) {
        // The record's parts in the order ``Record`` reads them, whichever way they are written.
        func eachPart(_ body: (UnsafeRawBufferPointer) -> Void) {
            withUnsafeBytes(of: header, body)
            body(id)
            request?.withUnsafeBytes(body)
            reply.withUnsafeBytes(body)
        }
        let length = Self.headerBytes + id.count + (request?.count ?? 0) + reply.count
        guard length <= Self.gatheredRecordBytes else {
            eachPart { append($0) }
            return
        }
        withUnsafeTemporaryAllocation(byteCount: length, alignment: 1) { record in
            var offset = 0
            eachPart { part in
                guard let base = part.baseAddress else { return }
                (record.baseAddress! + offset).copyMemory(from: base, byteCount: part.count)
                offset += part.count
            }
            append(UnsafeRawBufferPointer(record))
        }
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        records.append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// A record's header, read from the buffer: where its parts are.
    private struct Record {
        let fingerprint: UInt64
        let id: Range<Int>
        let request: Range<Int>?
        let reply: Range<Int>
        /// From its start to the next record's.
        var length: Int { reply.upperBound - id.lowerBound + RememberedRequestLog.headerBytes }

        init(_ buffer: UnsafeRawBufferPointer, at start: Int) {
            func word(_ index: Int) -> Int {
                buffer.loadUnaligned(fromByteOffset: start + index * MemoryLayout<Int>.size, as: Int.self)
            }
            fingerprint = UInt64(bitPattern: Int64(word(0)))
            let idStart = start + RememberedRequestLog.headerBytes
            id = idStart..<idStart + word(1)
            let requestLength = word(2)
            request =
                requestLength == RememberedRequestLog.noRequest
                ? nil : id.upperBound..<id.upperBound + requestLength
            let replyStart = request?.upperBound ?? id.upperBound
            reply = replyStart..<replyStart + word(3)
        }
    }
}
