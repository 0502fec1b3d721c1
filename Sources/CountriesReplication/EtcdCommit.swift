import CountriesCore
import CountriesStore
import Etcd
import Foundation

/// One batch's etcd transaction (docs/HA.md, "Commits"): what it compares, what it writes when
/// the compares hold and what it reads when they do not, made from the batch and what this
/// replica knows of etcd. A plain value: its shape is tested without a cluster, and
/// ``EtcdStore/commit(_:)`` only sends it and keeps what it changed.
struct EtcdCommit {
    /// The seq the store must still be at, the store's identity, and, when the batch has ids,
    /// the generation they go into and each id absent from every live generation.
    private(set) var compare: [EtcdCompare] = []
    /// The events, the new seq, the ids with their replies, the generation, and the trims.
    private(set) var success: [EtcdOperation] = []
    /// What moved the store, read back in the same round trip: the store key (index 0), the
    /// events after the basis (1) and, with ids, the generation (2): ``refusal(_:)`` reads them.
    private(set) var failure: [EtcdOperation] = []
    /// The ids the compares check: the changes' (written) and the refusals' and no-ops' (not).
    let checked: [String]
    /// The generation the ids were written into: the one given when the batch writes none.
    private(set) var written: RequestIDWindow.Generation
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
            .range(.from(layout.event(batch.basis + 1), toPrefixEnd: layout.eventsPrefix, limit: 1_000)),
        ]
        addIDs(of: batch, knowing: known)
        if lastSeq != batch.basis {
            success.append(.put(layout.seq, Data(String(lastSeq).utf8)))
        }
        for (index, event) in batch.events.enumerated() {
            // A reset is kept as a marker: the whole list would not fit in one request.
            let value = EtcdResetMarker(for: event, seedRows: seedRows)?.encoded ?? batch.encodedEvent(index)
            success.append(.put(layout.event(event.seq), value))
        }
        addTrim(basis: batch.basis, knowing: known)
    }

    /// The ids: none may be remembered in a live generation; changes' ids go into the
    /// generation the window says, and a commit that opens one deletes the generation before
    /// the current. Refusals' and no-ops' ids are checked, not written. A refused commit reads
    /// the ones it needs afterwards (``EtcdStore``): read-backs for every id in every commit
    /// made its request a fifth larger, for the rare refusal (docs/BENCHMARKS.md, "Stop 28").
    private mutating func addIDs(of batch: StoreBatch, knowing known: Knowledge) {
        let generation = known.generation
        if !checked.isEmpty {
            compare.append(.value(layout.idsGeneration, equals: generation.encoded))
            failure.append(.range(EtcdRangeRequest(key: layout.idsGeneration)))
            for id in checked {
                for number in EtcdCommit.liveGenerations(generation) {
                    compare.append(.createRevision(layout.request(id, generation: number), equals: 0))
                }
            }
        }
        guard !batch.requests.isEmpty else { return }
        let values = batch.requests.map {
            EtcdLayout.encode($0, reference: resetReference(of: $0, in: batch))
        }
        let bytes = zip(batch.requests, values).reduce(0) { $0 + $1.0.id.utf8.count + $1.1.count }
        let (next, opened) = known.window.after(
            generation, adding: values.count, bytes: bytes, nowMilliseconds: known.nowMilliseconds)
        written = next
        success.append(.put(layout.idsGeneration, next.encoded))
        if opened, generation.number > 0 {
            let expired = layout.generationPrefix(generation.number - 1)
            success.append(.deleteRange(key: expired, rangeEnd: EtcdRangeRequest.prefixEnd(expired)))
        }
        for (remembered, value) in zip(batch.requests, values) {
            success.append(.put(layout.request(remembered.id, generation: next.number), value))
        }
    }

    /// The last 10,000 events, but none after the newest snapshot this replica knows: the
    /// snapshot is written apart, and may have failed.
    private mutating func addTrim(basis: UInt64, knowing known: Knowledge) {
        let retained = UInt64(Limits.retainedEvents)
        guard lastSeq > retained, lastSeq != basis else { return }
        let end = min(lastSeq - retained + 1, known.knownSnapshotSeq + 1)
        // Events are written in seq order and never below the newest, so a range once trimmed
        // stays empty: from the last trim's end is enough, from the start once.
        guard end > 1, end > known.trimmedBefore ?? 0 else { return }
        let start = known.trimmedBefore.map(layout.event) ?? layout.eventsPrefix
        success.append(.deleteRange(key: start, rangeEnd: layout.event(end)))
        trimmedTo = end
    }

    /// The generations an id may be remembered in: the current one and the one before.
    static func liveGenerations(_ generation: RequestIDWindow.Generation) -> [UInt64] {
        generation.number == 0 ? [0] : [generation.number, generation.number - 1]
    }

    /// The marker to keep `request`'s reply as: its event's, when the event is a reset in
    /// `batch` whose reply, made again from the marker, is the reply byte for byte; else nil
    /// (kept in full).
    private func resetReference(of request: RememberedRequest, in batch: StoreBatch) -> EtcdResetMarker? {
        guard let seq = request.eventSeq, let event = batch.events.first(where: { $0.seq == seq }),
            let marker = EtcdResetMarker(for: event, seedRows: seedRows),
            marker.reply(seedRows: seedRows) == request.reply
        else { return nil }
        return marker
    }

    /// What a refused commit's reads say: the generation etcd holds now (nil when the batch
    /// had no ids, so none was read), and the events that moved the store past the basis (all
    /// of them, or none when the page was cut short or an entry is not its event). Throws when
    /// the store key is gone or names another store: the replica must restart.
    func refusal(_ result: EtcdTxnResponse) throws(StateStoreError) -> (
        generation: RequestIDWindow.Generation?, newer: [Event]
    ) {
        var generation: RequestIDWindow.Generation?
        var newer: [Event] = []
        for (index, outcome) in result.results.enumerated() {
            if index == 2 {
                // Whatever moved, the next try compares the generation etcd holds now.
                generation = try layout.generation(in: outcome)
                continue
            }
            guard case .range(let range) = outcome, let kv = range.kvs.first else { continue }
            switch index {
            case 0:
                if kv.value != Data(identity.utf8) {
                    throw StateStoreError(
                        "the prefix \(layout.prefix) now holds another store (\(String(decoding: kv.value, as: UTF8.self))); restart the replica"
                    )
                }
            case 1:
                let events = range.kvs.compactMap { layout.event(in: $0, seedRows: seedRows) }
                if !range.more && events.count == range.kvs.count { newer = events }
            default: break
            }
        }
        if result.results.first.map({ if case .range(let range) = $0 { range.kvs.isEmpty } else { false } })
            == true
        {
            throw StateStoreError("the store key \(layout.store) is gone from etcd; restart the replica")
        }
        return (generation, newer)
    }
}
