import CountriesCore
import CountriesStore
import Etcd
import Foundation
import SystemSupport

/// One replica's memory of the request ids remembered in etcd (docs/HA.md, "Request ids"): the
/// generation as last read, and which ids the live generations hold, with where each first
/// reply is kept (``RememberedIDs``). It is filled from the id log (`idlog/<seq>`) and from
/// the keys of ids from before the log, and brought up to a seq before a commit on it.
///
/// ``EtcdStore`` checks a batch's ids here, then commits with the seq compare as the only
/// fence. Used from the service's thread only.
final class EtcdIDMemory {
    private let client: EtcdClient
    private let layout: EtcdLayout
    /// What a reset marker in an entry stands for.
    private let seedRows: [IndexedCountry]
    private let logger: Logger
    /// Whether an entry no commit wrote was logged: once, not at every read.
    private var loggedForeignEntry = false
    /// The request-id generation as this replica last read or wrote it (its key counts only
    /// the ids kept before the id log: see ``logged``).
    private(set) var generation: RequestIDWindow.Generation {
        didSet {
            if generation.number != oldValue.number {
                generationKnownSince = SteadyWallClock.bootNanoseconds()
            }
        }
    }
    /// When this replica first knew the current generation, on the boot-time clock: what its
    /// age is judged by besides the wall clock (``windowNowMilliseconds(wall:boot:)``).
    private var generationKnownSince = SteadyWallClock.bootNanoseconds()
    /// What the current generation's entries in the id log hold, as far as the memory reaches.
    var logged: RememberedIDs.Tally { ids.tally(of: generation.number) }
    private var ids = RememberedIDs()

    /// Entries of the id log per read: up to 32 ids with their replies each, so a page stays
    /// around a megabyte.
    static let pageSize = 100

    /// A memory of the store at `layout`, read now (the generation moved to the id log's form
    /// first, when the store is from before the log), so that the first change does not wait
    /// for the window's ids.
    init(
        generation found: RequestIDWindow.Generation, client: EtcdClient, layout: EtcdLayout,
        seedRows: [IndexedCountry], logger: Logger
    ) throws(StateStoreError) {
        self.client = client
        self.layout = layout
        self.seedRows = seedRows
        self.logger = logger
        generation = try EtcdIDMemory.moveToIDLog(found, client: client, layout: layout)
        try load()
    }

    /// Now, as the request-id window judges the current generation's age at: the wall clock,
    /// held back to how long this replica has known the generation
    /// (``RequestIDWindow/judgedNow(wallMilliseconds:startedMilliseconds:knownForMilliseconds:)``).
    func windowNowMilliseconds(
        wall: Int64 = RequestIDWindow.nowMilliseconds, boot: Int64 = SteadyWallClock.bootNanoseconds()
    ) -> Int64 {
        RequestIDWindow.judgedNow(
            wallMilliseconds: wall, startedMilliseconds: generation.startedMilliseconds,
            knownForMilliseconds: (boot - generationKnownSince) / 1_000_000)
    }

    /// The generation, written in the id log's form when it is still in the form of a store
    /// from before the log. Replicas that predate the log cannot read that form, so none of
    /// them commits an id after it (its commit's compare fails, and its read of the generation
    /// stops it): every id from then on is in the log, and the ones before stay in their keys.
    private static func moveToIDLog(
        _ found: RequestIDWindow.Generation, client: EtcdClient, layout: EtcdLayout
    ) throws(StateStoreError) -> RequestIDWindow.Generation {
        var current = found
        for _ in 0..<8 where current.isLegacy {
            var moved = current
            moved.isLegacy = false
            let result = try EtcdStore.read { () throws(EtcdError) in
                try client.txn(
                    compare: [.value(layout.idsGeneration, equals: Data(current.legacyEncoded.utf8))],
                    success: [.put(layout.idsGeneration, moved.encoded)],
                    failure: [.range(EtcdRangeRequest(key: layout.idsGeneration))])
            }
            if result.succeeded { return moved }
            current = try layout.generation(in: result.results.first)
        }
        guard !current.isLegacy else {
            throw StateStoreError(
                "the key \(layout.idsGeneration) kept changing in the form of replicas older than the id log")
        }
        return current
    }

    /// The generations an id may be remembered in: the current one and the one before.
    static func liveGenerations(_ generation: RequestIDWindow.Generation) -> [UInt64] {
        generation.number == 0 ? [0] : [generation.number, generation.number - 1]
    }

    // MARK: Reading etcd

    /// The remembered request of `id`, nil when the live generations do not hold it: the
    /// memory is brought up to the newest commit first.
    func request(for id: String) throws(StateStoreError) -> RememberedRequest? {
        let latest = try EtcdStore.read { () throws(EtcdError) in
            try client.range(EtcdRangeRequest(key: layout.seq))
        }
        try learn(through: try layout.seqValue(in: latest))
        return try requests(among: [id]).first
    }

    /// Brings the memory up to the commits through `seq`: the id log's entries after what it
    /// knows (everything, at the first call). A memory past `seq` (a batch staged on a state
    /// behind) is left as it is: every id in it was committed, and the seq compare refuses that
    /// batch anyway.
    func learn(through seq: UInt64) throws(StateStoreError) {
        guard let known = ids.knownThrough else {
            try load()
            if (ids.knownThrough ?? 0) < seq { try learn(through: seq) }
            return
        }
        guard known < seq else { return }
        // With the generation, at the same revision: another replica may have opened one.
        let entries = EtcdRangeRequest(
            key: layout.idLog(known + 1), rangeEnd: layout.idLog(seq + 1), limit: EtcdIDMemory.pageSize)
        let read = try EtcdStore.read { () throws(EtcdError) in
            try client.txn(
                compare: [], success: [.range(entries), .range(EtcdRangeRequest(key: layout.idsGeneration))],
                failure: [])
        }
        guard case .range(let page)? = read.results.first else {
            throw StateStoreError("etcd answered a read of the id log without its range")
        }
        generation = try layout.generation(in: read.results.count > 1 ? read.results[1] : nil)
        try learn(page.kvs, through: seq)
        if let rest = entries.next(after: page) {
            try forEachPage(rest) { kvs throws(StateStoreError) in try learn(kvs, through: seq) }
        }
        ids.reached(seq)
    }

    /// Reads every id of the live generations: the id log, and the keys of ids from before it,
    /// at one revision, with the seq at that revision.
    private func load() throws(StateStoreError) {
        let head = try EtcdStore.read { () throws(EtcdError) in
            try client.txn(
                compare: [],
                success: [
                    .range(EtcdRangeRequest(key: layout.seq)),
                    .range(EtcdRangeRequest(key: layout.idsGeneration)),
                ],
                failure: [])
        }
        guard case .range(let seqRange)? = head.results.first else {
            throw StateStoreError("etcd answered a read of \(layout.seq) without its range")
        }
        let seq = try layout.seqValue(in: seqRange)
        generation = try layout.generation(in: head.results.count > 1 ? head.results[1] : nil)
        let revision = seqRange.revision
        ids.reset()
        for number in EtcdIDMemory.liveGenerations(generation) {
            let prefix = layout.generationPrefix(number)
            try forEachPage(.prefix(prefix, limit: 1_000, revision: revision, keysOnly: true)) { keys in
                ids.learn(
                    keys.map { String($0.key.dropFirst(prefix.count)) }, generation: number, logSeq: nil)
            }
        }
        try forEachPage(.prefix(layout.idLogPrefix, limit: EtcdIDMemory.pageSize, revision: revision)) {
            kvs throws(StateStoreError) in try learn(kvs, through: seq)
        }
        ids.reached(seq)
    }

    /// Takes the id log's entries `kvs` of the commits through `seq`, forgetting the
    /// generations no longer live.
    ///
    /// What no commit wrote is not part of the log (docs/HA.md, "Failures"), and anyone who can
    /// write under the prefix could put it: a key that is not a seq's, a seq past `seq`, or an
    /// entry of a generation past the current one (a commit opens a generation and writes its
    /// key in one transaction, read here at the same revision or later). Taken, such an entry
    /// made a replica starting afterwards forget every live id, and a retry applied twice.
    private func learn(_ kvs: [EtcdKeyValue], through seq: UInt64) throws(StateStoreError) {
        var newest = generation.number
        for kv in kvs {
            guard let logSeq = layout.seq(ofIDLogKey: kv.key), logSeq <= seq else { continue }
            guard let entry = EtcdLayout.decodeIDLogEntry(kv.value, seedRows: seedRows) else {
                let shown = CountryName.quoted(String(decoding: kv.value.prefix(48), as: UTF8.self))
                throw StateStoreError(
                    "the key \(kv.key) in etcd holds \(shown)\(kv.value.count > 48 ? "..." : ""), not an entry of the id log: this replica cannot check request ids, so it commits no change; delete that key (its ids are then forgotten) or restore etcd from a backup, and check who can write to etcd (docs/SECURITY.md)"
                )
            }
            guard entry.generation <= generation.number else {
                if !loggedForeignEntry {
                    loggedForeignEntry = true
                    logger.log(
                        .warning,
                        "the id log's entry \(kv.key) is of generation \(entry.generation), past the current \(generation.number): no commit wrote it, so its ids are not taken (remove it; check who can write to etcd: docs/SECURITY.md)"
                    )
                }
                continue
            }
            ids.learn(
                entry.requests.map(\.id), generation: entry.generation, logSeq: logSeq, bytes: kv.value.count)
            newest = max(newest, entry.generation)
        }
        if newest > 0 { ids.forget(before: newest - 1) }
    }

    /// Hands every key of `request` to `body`, a page at a time, so no more than a page is
    /// held at once.
    private func forEachPage(
        _ request: EtcdRangeRequest, _ body: ([EtcdKeyValue]) throws(StateStoreError) -> Void
    ) throws(StateStoreError) {
        var next: EtcdRangeRequest? = request
        while let current = next {
            let page = try EtcdStore.read { () throws(EtcdError) in try client.range(current) }
            try body(page.kvs)
            next = current.next(after: page)
        }
    }

    /// The requests and first replies of the remembered ids among `wanted`, in the order asked,
    /// read where the memory says they are (one transaction of ranges per 128 places), unless
    /// already `read`. An id whose place is gone (its generation was deleted since) is
    /// forgotten: it is no longer remembered.
    func requests(among wanted: [String], read: [String: RememberedRequest] = [:]) throws(StateStoreError)
        -> [RememberedRequest]
    {
        let found = ids.remembered(among: wanted)
        var requests: [String: RememberedRequest] = read
        var keys: [String] = []
        var keysAsked = Set<String>()
        // The id each key of its own holds (a store's from before the id log).
        var ownKeys: [String: String] = [:]
        for (id, entry) in found where requests[id] == nil {
            let key = entry.logSeq.map(layout.idLog) ?? layout.request(id, generation: entry.generation)
            if entry.logSeq == nil { ownKeys[key] = id }
            if keysAsked.insert(key).inserted { keys.append(key) }
        }
        var start = 0
        while start < keys.count {
            let page = keys[start..<min(start + EtcdStore.operationsPerTransaction, keys.count)]
            start = page.endIndex
            let result = try EtcdStore.read { () throws(EtcdError) in
                try client.txn(
                    compare: [], success: page.map { .range(EtcdRangeRequest(key: $0)) }, failure: [])
            }
            for outcome in result.results {
                guard case .range(let range) = outcome, let kv = range.kvs.first else { continue }
                if layout.seq(ofIDLogKey: kv.key) != nil {
                    for request in EtcdLayout.decodeIDLogEntry(kv.value, seedRows: seedRows)?.requests ?? [] {
                        requests[request.id] = requests[request.id] ?? request
                    }
                } else if let id = ownKeys[kv.key],
                    let request = EtcdLayout.decodeRequest(id: id, kv.value, seedRows: seedRows)
                {
                    requests[id] = request
                }
            }
        }
        var remembered: [RememberedRequest] = []
        for (id, _) in found {
            if let request = requests[id] {
                remembered.append(request)
            } else {
                ids.forget(id)
            }
        }
        return remembered
    }

    // MARK: After a commit

    /// Takes a commit of this replica's that succeeded: it left the generation's key at
    /// `generation`, wrote its `requests` in the entry at `logSeq` of `bytes`, and ends at
    /// `lastSeq`.
    func committed(
        _ requests: [String], generation written: RequestIDWindow.Generation, logSeq: UInt64?, bytes: Int,
        through lastSeq: UInt64
    ) {
        generation = written
        ids.learn(requests, generation: written.number, logSeq: logSeq, bytes: bytes)
        ids.reached(lastSeq)
        if written.number > 0 { ids.forget(before: written.number - 1) }
    }

    /// Takes what a refused commit's failure reads found (``EtcdCommit/Refusal``): the
    /// generation, and the id log's entries of the commits that came first, through
    /// `newestSeq`. Returns the requests those entries hold, by id, so a check needs no other
    /// read of them.
    func refused(
        generation read: RequestIDWindow.Generation, idLog entries: [EtcdCommit.IDLogEntry]?,
        through newestSeq: UInt64?
    ) -> [String: RememberedRequest] {
        generation = read
        var requests: [String: RememberedRequest] = [:]
        guard let entries, let newestSeq else { return requests }
        for entry in entries {
            ids.learn(
                entry.requests.map(\.id), generation: entry.generation, logSeq: entry.firstSeq,
                bytes: entry.bytes)
            for request in entry.requests { requests[request.id] = request }
        }
        ids.reached(newestSeq)
        return requests
    }
}
