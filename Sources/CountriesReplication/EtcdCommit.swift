import CountriesCore
import CountriesStore
import Etcd
import Foundation

/// One batch's etcd transaction (docs/HA.md, "Commits"): what it compares, what it writes when
/// the compares hold and what it reads when they do not, made from the batch and what this
/// replica knows of etcd. A plain value: its shape is tested without a cluster, and
/// ``EtcdStore/commit(_:)`` only sends it and keeps what it changed.
struct EtcdCommit {
    /// The seq the store must still be at and the store's identity. The ids are checked by the
    /// store, against what it knows up to the basis, and so is the generation: the seq compare
    /// makes that enough, as every commit that opens a generation moves the seq.
    private(set) var compare: [EtcdCompare] = []
    /// The events (one entry of the log), the new seq, the id log's entry with the ids and
    /// their replies, the generation when this commit opens one, and the trims.
    private(set) var success: [EtcdOperation] = []
    /// What moved the store, read back in the same round trip: the store key (index 0), the
    /// events after the basis (1), the generation (2) and the id log's entries after the basis
    /// (3): ``refusal(_:)`` reads them.
    private(set) var failure: [EtcdOperation] = []
    /// The ids the store checks: the changes' (written) and the refusals' and no-ops' (not).
    let checked: [String]
    /// The generation as its key holds it after this commit: the one given, or the one this
    /// commit opened.
    private(set) var written: RequestIDWindow.Generation
    /// The size of the batch's entry in the id log (0 when it remembers no id).
    private(set) var idLogBytes = 0
    /// Where the trim of old events ends, when this commit trims.
    private(set) var trimmedTo: UInt64?
    /// The seq of the batch's last event (its basis when it has none).
    let lastSeq: UInt64

    private let layout: EtcdLayout
    private let identity: String
    private let seedRows: [IndexedCountry]

    /// What this replica knows of etcd when it commits.
    struct Knowledge {
        /// The request-id generation as last seen in etcd.
        var generation: RequestIDWindow.Generation
        /// What the generation's entries in the id log hold, through the basis: its key
        /// counts only the ids kept before the log.
        var logged = RememberedIDs.Tally()
        /// How long ids are remembered.
        var window: RequestIDWindow
        /// The newest snapshot's seq known: no event after it may be trimmed.
        var knownSnapshotSeq: UInt64
        /// Where the last trim ended (nil: this process has not trimmed yet).
        var trimmedBefore: UInt64?
        /// Now, for the id window's age.
        var nowMilliseconds: Int64
    }

    /// The transaction that commits `batch` on top of its basis.
    init(
        _ batch: StoreBatch, layout: EtcdLayout, identity: String, seedRows: [IndexedCountry],
        knowing known: Knowledge
    ) {
        self.layout = layout
        self.identity = identity
        self.seedRows = seedRows
        lastSeq = batch.events.last?.seq ?? batch.basis
        checked = batch.requests.map(\.id) + batch.checkedIDs
        written = known.generation
        compare = [
            .value(layout.seq, equals: Data(String(batch.basis).utf8)),
            .value(layout.store, equals: Data(identity.utf8)),
        ]
        failure = [
            .range(EtcdRangeRequest(key: layout.store)),
            // What moved the store past the basis, so catching up costs no second round trip.
            // The basis is a commit's last seq, so an entry starts after it.
            .range(.from(layout.event(batch.basis + 1), toPrefixEnd: layout.eventsPrefix, limit: 100)),
            .range(EtcdRangeRequest(key: layout.idsGeneration)),
            // The ids those commits remembered, so the next try checks them too.
            .range(
                .from(
                    layout.idLog(batch.basis + 1), toPrefixEnd: layout.idLogPrefix,
                    limit: EtcdIDMemory.pageSize
                )),
        ]
        addIDs(of: batch, knowing: known)
        if lastSeq != batch.basis {
            success.append(.put(layout.seq, Data(String(lastSeq).utf8)))
        }
        if let first = batch.events.first {
            // One key for the whole batch: etcd's cost of a commit grows with its keys, and a key
            // per event held its rate at 16 changes a commit to about two thirds
            // (docs/BENCHMARKS.md, "Stop 40"). A reset is kept as a marker: the whole list would
            // not fit in one request.
            let values = batch.events.indices.map { index in
                EtcdResetMarker(for: batch.events[index], seedRows: seedRows)?.encoded
                    ?? Data(batch.encodedEvent(index))
            }
            success.append(.put(layout.event(first.seq), EtcdLayout.encodeEntry(values)))
        }
        addTrim(basis: batch.basis, knowing: known)
    }

    /// The ids: the store checked them against the ids it knows (``RememberedIDs``), which the
    /// seq compare makes enough. Changes' ids go into the generation the window says, as one
    /// entry in the id log under the batch's first seq. The generation's key is written only
    /// by the commit that opens one: how full it is, is its key's count (ids kept before the
    /// log) and its entries', which every replica knows through the basis; a put of it in
    /// every commit cost etcd about an eighth of its rate at 16 changes a commit
    /// (docs/BENCHMARKS.md, "Stop 39"). A commit that opens a generation deletes the entries
    /// (and the keys of a store from before the id log) of the one before the current.
    /// Refusals' and no-ops' ids are checked, not written.
    private mutating func addIDs(of batch: StoreBatch, knowing known: Knowledge) {
        guard !batch.requests.isEmpty else { return }
        let generation = known.generation
        var full = generation
        full.count += known.logged.count
        full.bytes += known.logged.bytes
        let firstSeq = batch.events.first?.seq ?? batch.basis + 1
        // Labeled as the encoder takes them: an unlabeled array is converted by a cast per commit.
        let entries = batch.requests.map { (request: $0, reference: resetReference(of: $0, in: batch)) }
        var entry = EtcdLayout.encodeIDLogEntry(generation: generation.number, entries)
        // Sized with the current generation's number: a digit more when it opens the next is
        // nothing to the window, and every replica counts the entry as stored.
        let (next, opens) = known.window.after(
            full, adding: entries.count, bytes: entry.count, nowMilliseconds: known.nowMilliseconds,
            atSeq: firstSeq)
        if opens { entry = EtcdLayout.encodeIDLogEntry(generation: next.number, entries) }
        idLogBytes = entry.count
        if opens {
            // Its entries count it, this commit's first: the key holds none outside the log.
            var key = next
            key.count = 0
            key.bytes = 0
            written = key
            success.append(.put(layout.idsGeneration, key.encoded))
            if generation.firstSeq > generation.previousFirstSeq {
                success.append(
                    .deleteRange(
                        key: layout.idLog(generation.previousFirstSeq),
                        rangeEnd: layout.idLog(generation.firstSeq)))
            }
            if generation.number > 0 {
                let expired = layout.generationPrefix(generation.number - 1)
                success.append(.deleteRange(key: expired, rangeEnd: EtcdRangeRequest.prefixEnd(expired)))
            }
        }
        success.append(.put(layout.idLog(firstSeq), entry))
    }

    /// The last 10,000 events, but none after the newest snapshot this replica knows: the
    /// snapshot is written apart, and may have failed. Whole entries go: the ones keyed up to
    /// an entry's width before that bound, so none of them holds an event past it.
    private mutating func addTrim(basis: UInt64, knowing known: Knowledge) {
        let retained = UInt64(Limits.retainedEvents)
        guard lastSeq > retained, lastSeq != basis else { return }
        let end = EtcdLayout.firstEntry(holding: min(lastSeq - retained + 1, known.knownSnapshotSeq + 1))
        // Events are written in seq order and never below the newest, so a range once trimmed
        // stays empty: from the last trim's end is enough, from the start once.
        guard end > 1, end > known.trimmedBefore ?? 0 else { return }
        let start = known.trimmedBefore.map(layout.event) ?? layout.eventsPrefix
        success.append(.deleteRange(key: start, rangeEnd: layout.event(end)))
        trimmedTo = end
    }

    /// The marker to keep `request`'s reply as: its event's, when the event is a reset in
    /// `batch` whose reply, made again from the marker, is the reply byte for byte; else nil
    /// (kept in full).
    private func resetReference(of request: RememberedRequest, in batch: StoreBatch) -> EtcdResetMarker? {
        guard let seq = request.eventSeq, let event = batch.events.first(where: { $0.seq == seq }),
            let marker = EtcdResetMarker(for: event, seedRows: seedRows),
            marker.reply(seedRows: seedRows).elementsEqual(request.reply)
        else { return nil }
        return marker
    }

    /// What a refused commit's reads say. The generation etcd holds now; the events that
    /// moved the store past the basis (all of them, or none when the page was cut short or an
    /// entry is not its event); and the id log's entries after the basis, each with its first
    /// seq (nil when the page was cut short or an entry does not decode: the store reads them
    /// itself). Throws when the store key is gone or names another store (the replica must
    /// restart), or when the generation key is gone or holds something else.
    func refusal(_ result: EtcdTxnResponse) throws(StateStoreError) -> Refusal {
        var refusal = Refusal(
            generation: try layout.generation(in: result.results.count > 2 ? result.results[2] : nil))
        for (index, outcome) in result.results.enumerated() {
            guard case .range(let range) = outcome else { continue }
            switch index {
            case 0:
                guard let kv = range.kvs.first else {
                    throw StateStoreError(
                        "the store key \(layout.store) is gone from etcd; restart the replica")
                }
                if kv.value != Data(identity.utf8) {
                    throw StateStoreError(
                        "the prefix \(layout.prefix) now holds another store (\(String(decoding: kv.value, as: UTF8.self))); restart the replica"
                    )
                }
            case 1:
                let entries = range.kvs.compactMap { layout.events(in: $0, seedRows: seedRows) }
                if !range.more && entries.count == range.kvs.count { refusal.newer = entries.flatMap { $0 } }
            case 3:
                var entries: [IDLogEntry] = []
                for kv in range.kvs {
                    guard let seq = layout.seq(ofIDLogKey: kv.key),
                        let entry = EtcdLayout.decodeIDLogEntry(kv.value, seedRows: seedRows)
                    else { break }
                    entries.append(
                        IDLogEntry(
                            firstSeq: seq, generation: entry.generation, requests: entry.requests,
                            bytes: kv.value.count))
                }
                if !range.more && entries.count == range.kvs.count { refusal.idLog = entries }
            default: break
            }
        }
        return refusal
    }

    /// What a refused commit read back (``refusal(_:)``).
    struct Refusal {
        /// The request-id generation etcd holds now.
        var generation: RequestIDWindow.Generation
        /// The events after the basis, or none when they were not all read.
        var newer: [Event] = []
        /// The id log's entries after the basis, or nil when they were not all read.
        var idLog: [IDLogEntry]?
    }

    /// One commit's entry in the id log.
    struct IDLogEntry: Equatable {
        var firstSeq: UInt64
        var generation: UInt64
        var requests: [RememberedRequest]
        /// The size of its value, which the generation's tally counts.
        var bytes: Int
    }
}
