import CountriesCore
import CountriesStore
import Foundation
import SQLite

/// The request ids a ``SQLiteStore`` remembers, with what they asked and their first replies:
/// the `requests` table and what the store keeps of it in memory (the SQLite twin of
/// ``RememberedRequestLog``).
///
/// The table has no index on disk: each id's ordinal is kept here, so a look-up is one read by
/// primary key, and a commit appends its ids as the last page of the table. A reset's reply is
/// kept as a reference to its event (the list would otherwise be stored twice), and written in
/// full before that event is deleted. Old ids are deleted `trimInterval` at a time, while
/// look-ups already treat them as forgotten (`RequestIDRetention.keeps`).
///
/// A commit goes through the log in three steps: ``beginCommit(adding:)`` before the store's
/// transaction, ``inlineResets(keptFrom:into:)`` and ``write(_:into:)`` inside it, and
/// ``endCommit(_:of:)`` once it is on disk, so memory follows the file and nothing changes
/// when the transaction fails.
final class SQLiteRequestLog {
    /// What one commit does to the requests table, carried from its first step to its last.
    struct Commit {
        /// When the commit's ids are remembered, in milliseconds since 1970.
        fileprivate let now: Int64
        /// How many of the oldest ids the commit deletes, and the ordinal they go through.
        fileprivate let forgetting: (count: Int, through: Int64?)
        /// The ordinal of the last id written.
        fileprivate var ordinal: Int64
        /// The ids written, with their ordinals, in order.
        fileprivate var remembered: [(id: String, ordinal: Int64)] = []
        /// The written ids whose reply is a reference to a reset's event.
        fileprivate var referenced: [(ordinal: Int64, seq: UInt64)] = []
        /// How many of the oldest references were written in full.
        fileprivate var inlined = 0
        /// The bytes each of them grew by: the id's weight in ``RequestIDRetention`` grows too,
        /// so that replies written in full count against its byte maximum.
        fileprivate var inlinedBytes: [(ordinal: Int64, bytes: Int)] = []
    }

    /// The store's identity: part of every reply made again from a reset's event.
    private let identity: String
    /// How many ids go by between deletes of the ones no longer kept.
    private let trimInterval: Int
    /// Now, in milliseconds since 1970: when an id was remembered, and whether it is old.
    private let clock: @Sendable () -> Int64
    /// Which ids are kept, by count, bytes and age.
    private var retention: RequestIDRetention
    /// Ids a maximum forgot while younger than the age floor
    /// (``RequestIDRetention/forgottenYoung``).
    var forgottenYoung: Int { retention.forgottenYoung }
    /// The ordinal of each remembered request id: the index the table no longer keeps on disk.
    private var ordinals: [String: Int64] = [:]
    /// The last ordinal given to a remembered request.
    private var lastOrdinal: Int64 = 0
    /// Remembered resets whose reply is kept as a reference to their event, in seq order:
    /// before that event is deleted, its reply is written in full.
    private var resetReferences: [(ordinal: Int64, seq: UInt64)] = []

    private let insertRequest: Statement
    private let trimRequests: Statement
    private let selectRequest: Statement
    private let deleteRequest: Statement
    private let selectRequestTail: Statement
    private let storeReplyInline: Statement
    private let selectEventBody: Statement

    /// Prepares the log's statements on `database`, whose schema is in place; ``load()`` then
    /// reads the ids already remembered.
    init(
        database: Database, identity: String, retention: RequestIDRetention, trimInterval: Int,
        clock: @escaping @Sendable () -> Int64
    ) throws(SQLiteError) {
        self.identity = identity
        self.retention = retention
        self.trimInterval = trimInterval
        self.clock = clock
        insertRequest = try database.prepare(
            "INSERT INTO requests(ordinal, id, request, reply, at, event) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        trimRequests = try database.prepare("DELETE FROM requests WHERE ordinal <= ?1")
        selectRequest = try database.prepare("SELECT request, reply, event FROM requests WHERE ordinal = ?1")
        deleteRequest = try database.prepare("DELETE FROM requests WHERE ordinal = ?1")
        selectRequestTail = try database.prepare(
            """
            SELECT ordinal, id, at, length(id) + ifnull(length(request), 0) + length(reply), event
            FROM requests WHERE ordinal > ?1 ORDER BY ordinal
            """)
        storeReplyInline = try database.prepare(
            "UPDATE requests SET reply = ?2, event = NULL WHERE ordinal = ?1")
        selectEventBody = try database.prepare("SELECT body FROM events WHERE seq = ?1")
    }

    /// Reads the remembered ids with their ordinals, sizes, times and reset references.
    ///
    /// Throws ``StoreOpenError`` (`corrupt`, naming `path`) for a damaged row.
    func load(path: String) throws {
        for row in try selectRequestTail.rows([.integer(0)]) {
            guard row.count == 5, case .integer(let ordinal) = row[0], case .text(let id) = row[1],
                case .integer(let bytes) = row[3]
            else {
                throw StoreOpenError(.corrupt, path: path, "a remembered request id is damaged")
            }
            // Ids from before schema 4 have no time: they count as old.
            let at: Int64
            if case .integer(let stored) = row[2] { at = stored } else { at = 0 }
            ordinals[id] = ordinal
            lastOrdinal = ordinal
            retention.remember(ordinal: ordinal, id: id, bytes: Int(bytes), milliseconds: at)
            if case .integer(let seq) = row[4] { resetReferences.append((ordinal, UInt64(seq))) }
        }
    }

    /// The request remembered under this id, with its first reply, if it is remembered.
    func rememberedRequest(for id: String) throws(StateStoreError) -> RememberedRequest? {
        // Rows the retention lets go wait for the next trim, forgotten already.
        guard let ordinal = ordinals[id], retention.keeps(ordinal: ordinal, nowMilliseconds: clock()) else {
            return nil
        }
        let rows = try StateStoreError.running { () throws(SQLiteError) in
            try selectRequest.rows([.integer(ordinal)])
        }
        guard let row = rows.first, row.count == 3, case .blob(let reply) = row[1] else { return nil }
        var request: [UInt8]?
        if case .blob(let bytes) = row[0] { request = bytes }
        if case .integer(let seq) = row[2] {
            return RememberedRequest(id: id, request: request, reply: try resetReply(atSeq: UInt64(seq)))
        }
        return RememberedRequest(id: id, request: request, reply: reply)
    }
}

// MARK: - Committing

extension SQLiteRequestLog {
    /// Plans a commit that remembers `requests`: when it happens, and which old ids it deletes.
    func beginCommit(adding requests: [RememberedRequest]) -> Commit {
        let now = clock()
        return Commit(
            now: now, forgetting: trimmed(adding: requests, nowMilliseconds: now), ordinal: lastOrdinal)
    }

    /// Writes in full the reply of every remembered reset whose event is at `keepFrom` or
    /// before: the store is about to delete those events. Inside the commit's transaction.
    func inlineResets(keptFrom keepFrom: Int64, into commit: inout Commit) throws {
        for reference in resetReferences where reference.seq <= UInt64(keepFrom) {
            let reply = try resetReply(atSeq: reference.seq)
            try storeReplyInline.run { parameters in
                parameters.integer(reference.ordinal)
                reply.withUnsafeBytes { parameters.blob($0) }
            }
            commit.inlined += 1
            commit.inlinedBytes.append((reference.ordinal, reply.count))
        }
    }

    /// Writes the batch's remembered requests, each replacing an earlier row of its id, and
    /// deletes the ids the commit forgets. Inside the commit's transaction.
    func write(_ batch: StoreBatch, into commit: inout Commit) throws {
        // Finds an id this commit remembered already, should one come twice.
        var batchIDs = BatchIDTable<Int64>()
        for request in batch.requests {
            if let earlier = batchIDs.find(
                request.id, among: commit.remembered.count,
                entry: { (commit.remembered[$0].id, commit.remembered[$0].ordinal) })
                ?? ordinals[request.id]
            {
                try deleteRequest.run([.integer(earlier)])
            }
            commit.ordinal += 1
            let ordinal = commit.ordinal
            let reference = resetReference(of: request, in: batch)
            try insertRequest.run { parameters in
                parameters.integer(ordinal)
                parameters.text(request.id)
                if let asked = request.request {
                    asked.withUnsafeBytes { parameters.blob($0) }
                } else {
                    parameters.null()
                }
                // A reset's reply is its event, kept apart: an empty blob here.
                (reference == nil ? request.reply : []).withUnsafeBytes { parameters.blob($0) }
                parameters.integer(commit.now)
                if let reference { parameters.integer(Int64(reference)) } else { parameters.null() }
            }
            commit.remembered.append((request.id, ordinal))
            if let reference { commit.referenced.append((ordinal, reference)) }
        }
        if let through = commit.forgetting.through { try trimRequests.run([.integer(through)]) }
    }

    /// Brings memory to what `commit`, now on disk, wrote for `requests`.
    func endCommit(_ commit: Commit, of requests: [RememberedRequest]) {
        retention.forget(commit.forgetting.count, nowMilliseconds: commit.now, from: &ordinals) { $0 }
        resetReferences.removeFirst(commit.inlined)
        for inlined in commit.inlinedBytes { retention.grow(ordinal: inlined.ordinal, by: inlined.bytes) }
        if let through = commit.forgetting.through { resetReferences.removeAll { $0.ordinal <= through } }
        resetReferences += commit.referenced
        for (request, (id, ordinal)) in zip(requests, commit.remembered) {
            ordinals[id] = ordinal
            let stored =
                commit.referenced.contains { $0.ordinal == ordinal }
                ? request.bytes - request.reply.count : request.bytes
            retention.remember(ordinal: ordinal, id: id, bytes: stored, milliseconds: commit.now)
        }
        lastOrdinal = commit.ordinal
    }
}

// MARK: - Helpers

extension SQLiteRequestLog {
    /// The ids a commit of `requests` at `now` deletes: none until `trimInterval` of them may
    /// go (a commit between writes only the pages it appends to), unless the byte maximum is
    /// passed (one reply may be a whole list). Ids past the count maximum wait for the next
    /// trim like old ones: look-ups already treat them as forgotten (`RequestIDRetention.keeps`),
    /// and deleting one row per commit once 100,000 ids were kept added pages to every commit.
    private func trimmed(adding requests: [RememberedRequest], nowMilliseconds now: Int64)
        -> (count: Int, through: Int64?)
    {
        let addingBytes = requests.reduce(0) { $0 + $1.bytes }
        let (count, required) = retention.forgettable(
            nowMilliseconds: now, adding: requests.count, addingBytes: addingBytes)
        let overBytes = required && retention.bytes + addingBytes > retention.maximumBytes
        guard overBytes || count >= trimInterval else { return (0, nil) }
        return (count, retention.ordinalForgotten(through: count))
    }

    /// The seq to keep `request`'s reply as: its event's, when the event is a reset in `batch`
    /// whose reply, made again from it, is the reply byte for byte; else nil (kept in full).
    private func resetReference(of request: RememberedRequest, in batch: StoreBatch) -> UInt64? {
        guard let seq = request.eventSeq,
            let event = batch.events.first(where: { $0.seq == seq }), case .reset = event.kind
        else { return nil }
        return reply(answering: event) == request.reply ? seq : nil
    }

    /// The reply of the remembered reset that made the event at `seq`, made again from it.
    private func resetReply(atSeq seq: UInt64) throws(StateStoreError) -> [UInt8] {
        let rows = try StateStoreError.running { () throws(SQLiteError) in
            try selectEventBody.rows([.integer(Int64(seq))])
        }
        guard case .blob(let bytes)? = rows.first?.first, let event = try? Event.decode(Data(bytes)),
            event.seq == seq
        else {
            throw StateStoreError(
                "event \(seq), which holds the reply of a remembered reset, is missing or damaged")
        }
        return reply(answering: event)
    }

    /// The reply a change that made `event` got from this store.
    private func reply(answering event: Event) -> [UInt8] {
        var reply = Reply(answering: event)
        reply.store = identity
        return reply.encoded(as: [UInt8].self)
    }
}

@available(*, unavailable) extension SQLiteRequestLog: Sendable {}
