import CountriesCore
import CountriesStore
import Etcd
import Foundation

/// Where a replicated service keeps what it owns under its etcd prefix (docs/HA.md, "What is in
/// etcd"). Every key is plain ASCII below the prefix:
///
/// - `store`: the store identity, written once by the replica that seeded the prefix;
/// - `seq`: the latest seq, in decimal; every commit compares it, so replicas take turns;
/// - `snapshot`: the whole list as a `countries.reset` event at some recent seq, in chunks
///   (``EtcdBlob``; absent until the first one: then the seed at seq 0 is the snapshot);
/// - `seed`: the list `reset` goes back to, written once with the store, in chunks;
/// - `chunks/snapshot/<token>/<n>`, `chunks/seed/<token>/<n>`: those chunks;
/// - `events/<first seq, 20 digits>`: the retained events, one entry per commit under the seq
///   of its first change: its events one a line, each as published, a reset as a marker
///   (``EtcdResetMarker``); a store from before entries kept an event a key, which reads as an
///   entry of one;
/// - `lineage`: a mark of etcd's history that a restore from a snapshot breaks (``StoreLineage``);
/// - `ids-generation`: the request-id generation commits write into (``RequestIDWindow``),
///   written by the commit that opens it;
/// - `idlog/<first seq, 20 digits>`: one entry per commit that remembered ids: its generation,
///   then each id with its canonical request and its reply;
/// - `ids/<generation>/<id>`: where a store from before the id log kept each id: its canonical
///   request, a newline, its reply; generation 0 is `requests/<id>`, where stores kept ids
///   before generations. Read at start, and deleted with their generation.
struct EtcdLayout: Sendable {
    /// The prefix, as given (`/countries/` by default).
    let prefix: String

    var store: String { prefix + "store" }
    var seq: String { prefix + "seq" }
    var snapshot: String { prefix + "snapshot" }
    /// The seed list `reset` goes back to, as a `countries.reset` event at seq 0: stored once,
    /// with the store, so every replica resets to the same list.
    var seed: String { prefix + "seed" }
    /// A lower bound of the members' `raftAppliedIndex - revision`, in decimal
    /// (``StoreLineage``): a member found below it was restored from a snapshot.
    var lineage: String { prefix + "lineage" }
    var eventsPrefix: String { prefix + "events/" }
    var requestsPrefix: String { prefix + "requests/" }

    /// The key of the log entry whose first event has this seq: zero-padded, so keys sort as
    /// seqs do.
    func event(_ seq: UInt64) -> String {
        EtcdLayout.key(seq, under: eventsPrefix)
    }

    /// Most events one entry of the log holds: a commit's batch (``EtcdStore/changesPerCommit``).
    /// A read that may start inside an entry starts this many seqs early, and a trim that must
    /// keep an event ends this many early (``firstEntry(holding:)``).
    static let eventsPerEntry = 32

    /// The first seq whose key may hold the event `seq`: the entry holding it is keyed at most
    /// ``eventsPerEntry`` - 1 seqs before it.
    static func firstEntry(holding seq: UInt64) -> UInt64 {
        seq > UInt64(eventsPerEntry) ? seq - UInt64(eventsPerEntry - 1) : 1
    }

    /// The events with seqs from `first` up to, not including, `end`: a range that ends at the
    /// seq it needs, never at the log's end (etcd 3.4 counts every key of a range, whatever its
    /// limit: ``EtcdEventLog``).
    func events(
        from first: UInt64, before end: UInt64, revision: Int64 = 0, limit: Int = 0, keysOnly: Bool = false
    ) -> EtcdRangeRequest {
        EtcdRangeRequest(
            key: event(first), rangeEnd: event(end), limit: limit, revision: revision, keysOnly: keysOnly)
    }

    /// The seq an event key names, or nil when it is not an event key.
    func seq(ofEventKey key: String) -> UInt64? {
        EtcdLayout.seq(of: key, under: eventsPrefix)
    }

    /// `prefix` and `seq` in 20 digits, zero-padded so keys sort as seqs do (the events, the id
    /// log).
    private static func key(_ seq: UInt64, under prefix: String) -> String {
        let digits = String(seq)
        return prefix + String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    /// The seq a key made by ``key(_:under:)`` names, or nil when it is not one: exactly 20
    /// digits after `prefix`, at most `Int64.max` (the largest seq a store keeps). Anyone who can
    /// write under the prefix could spell a seq otherwise (`events/+5`, `events/5`, which a watch
    /// delivers beside the real key), or key an entry at `UInt64.max`, whose later lines' seqs
    /// overflowed and stopped every replica that read it.
    private static func seq(of key: String, under prefix: String) -> UInt64? {
        guard key.hasPrefix(prefix) else { return nil }
        let digits = key.utf8.dropFirst(prefix.utf8.count)
        guard digits.count == 20, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let seq = UInt64(String(decoding: digits, as: UTF8.self)), seq <= UInt64(Int64.max)
        else { return nil }
        return seq
    }

    var idsGeneration: String { prefix + "ids-generation" }

    /// The generation a range of the generation key read; an error naming the key when its
    /// value is not one (the prefix holds something else, or someone wrote it by hand).
    func generation(in outcome: EtcdOperationResult?) throws(StateStoreError) -> RequestIDWindow.Generation {
        guard case .range(let range)? = outcome, let value = range.kvs.first?.value else {
            throw StateStoreError("the key \(idsGeneration) is gone from etcd; restart the replica")
        }
        guard let generation = RequestIDWindow.Generation(value) else {
            throw StateStoreError(
                "the key \(idsGeneration) holds \(CountryName.quoted(String(decoding: value.prefix(64), as: UTF8.self))), not a request-id generation"
            )
        }
        return generation
    }

    /// The seq a range of the seq key read; an error naming the key when it is gone or holds
    /// no seq.
    func seqValue(in range: EtcdRangeResponse) throws(StateStoreError) -> UInt64 {
        guard let value = range.kvs.first?.value, let number = UInt64(String(decoding: value, as: UTF8.self)),
            number <= UInt64(Int64.max)
        else {
            throw StateStoreError("the key \(seq) is gone from etcd or holds no seq; restart the replica")
        }
        return number
    }

    /// The key of request id `id` in `generation`.
    func request(_ id: String, generation: UInt64) -> String {
        generationPrefix(generation) + id
    }

    /// Where the ids of `generation` live: deleted as one range when it falls out of the window.
    func generationPrefix(_ generation: UInt64) -> String {
        generation == 0 ? requestsPrefix : prefix + "ids/\(generation)/"
    }

    /// One commit's entry in the event log: its events' values (each as published, or a reset's
    /// marker) one a line. None holds a raw newline: events and markers are compact JSON. An
    /// entry of one event is that event's value, as a store from before entries kept it.
    static func encodeEntry(_ values: [Data]) -> Data {
        var entry = Data(capacity: values.reduce(values.count) { $0 + $1.count })
        for (index, value) in values.enumerated() {
            if index > 0 { entry.append(0x0A) }
            entry.append(value)
        }
        return entry
    }

    /// The events a log entry holds, resets' markers (``EtcdResetMarker``) expanded with the
    /// seed's rows; nil when its value is not the events its key names (``entries(in:seedRows:)``).
    func events(in kv: EtcdKeyValue, seedRows: [IndexedCountry]) -> [Event]? {
        entries(in: kv, seedRows: seedRows)?.map(\.event)
    }

    /// The events a log entry holds, each with the bytes to publish for it: its line itself,
    /// or, for a reset's marker, the encoding of the event it stands for (the same on every
    /// replica). Nil when the value is not the events its key names: a line does not decode,
    /// is empty, or carries another seq than the key's and then one more a line, or there are
    /// more than ``eventsPerEntry``.
    func entries(in kv: EtcdKeyValue, seedRows: [IndexedCountry]) -> [(event: Event, body: Data)]? {
        guard let first = seq(ofEventKey: kv.key) else { return nil }
        // Most entries are one event (one client at a time): no split.
        guard kv.value.contains(0x0A) else {
            return EtcdLayout.entry(kv.value, seq: first, seedRows: seedRows).map { [$0] }
        }
        // A piece past the most an entry holds means too many lines, however many more.
        let lines = EtcdLayout.lines(of: kv.value, maxSplits: EtcdLayout.eventsPerEntry)
        guard lines.count <= EtcdLayout.eventsPerEntry else { return nil }
        var entries: [(event: Event, body: Data)] = []
        entries.reserveCapacity(lines.count)
        for (offset, line) in lines.enumerated() {
            guard let entry = EtcdLayout.entry(line, seq: first + UInt64(offset), seedRows: seedRows)
            else { return nil }
            entries.append(entry)
        }
        return entries
    }

    /// `value` cut at its first `maxSplits` newlines, empty pieces kept (as `split(separator:
    /// maxSplits:omittingEmptySubsequences: false)` cuts it), each piece a `Data` of its own.
    /// The event tail cuts every entry it follows: `memchr` over the bytes, where `Data`'s generic
    /// `split` checked exclusivity on every byte and took a fifth of the tail's time at 16
    /// clients (docs/BENCHMARKS.md, "Stop 41").
    static func lines(of value: Data, maxSplits: Int) -> [Data] {
        value.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> [Data] in
            guard let base = raw.baseAddress else { return [Data()] }
            var lines: [Data] = []
            var start = 0
            while lines.count < maxSplits,
                let hit = memchr(base + start, 0x0A, raw.count - start)
            {
                let end = base.distance(to: UnsafeRawPointer(hit))
                lines.append(Data(raw[start..<end]))
                start = end + 1
            }
            lines.append(Data(raw[start...]))
            return lines
        }
    }

    /// The event one line of an entry holds, when it is the event at `seq`.
    private static func entry(_ value: Data, seq: UInt64, seedRows: [IndexedCountry]) -> (
        event: Event, body: Data
    )? {
        if let marker = EtcdResetMarker(value) {
            guard marker.seq == seq else { return nil }
            let event = marker.event(seedRows: seedRows)
            return (event, event.encoded())
        }
        guard let event = try? Event.decode(value), event.seq == seq else { return nil }
        return (event, value)
    }

    /// Where commits keep the ids they remember: one key per commit, `idlog/<first seq>`.
    var idLogPrefix: String { prefix + "idlog/" }

    /// The id log's key of the commit whose first change is `seq`: zero-padded, so keys sort
    /// as seqs do.
    func idLog(_ seq: UInt64) -> String {
        EtcdLayout.key(seq, under: idLogPrefix)
    }

    /// The seq an id log key names, or nil when it is not one.
    func seq(ofIDLogKey key: String) -> UInt64? {
        EtcdLayout.seq(of: key, under: idLogPrefix)
    }

    /// One commit's entry in the id log: the generation its ids went into, then each remembered
    /// request as three lines (the id, the canonical request or an empty line, the reply or a
    /// reset's marker). None of them holds a raw newline: ids are printable ASCII, requests and
    /// replies compact JSON.
    static func encodeIDLogEntry(
        generation: UInt64, _ requests: [(request: RememberedRequest, reference: EtcdResetMarker?)]
    ) -> Data {
        var value = Data("\(generation)\n".utf8)
        for (remembered, reference) in requests {
            value.append(contentsOf: remembered.id.utf8)
            value.append(0x0A)
            value.append(EtcdLayout.encode(remembered, reference: reference))
            value.append(0x0A)
        }
        return value
    }

    /// The generation and the remembered requests of an id log entry (a reset's reply made
    /// again from its marker); nil when the value is not one.
    static func decodeIDLogEntry(_ value: Data, seedRows: [IndexedCountry]) -> (
        generation: UInt64, requests: [RememberedRequest]
    )? {
        var lines = EtcdLayout.lines(of: value, maxSplits: .max)
        // Every line ends with a newline: the last piece is empty. An entry remembers one id
        // at least.
        guard lines.count >= 5, lines.removeLast().isEmpty, (lines.count - 1) % 3 == 0,
            let generation = UInt64(String(decoding: lines[0], as: UTF8.self))
        else { return nil }
        var requests: [RememberedRequest] = []
        var index = 1
        while index < lines.count {
            let id = String(decoding: lines[index], as: UTF8.self)
            guard Request.problem(withID: id, named: "id") == nil,
                let remembered = decodeRequest(
                    id: id, Data(lines[index + 1]) + Data([0x0A]) + Data(lines[index + 2]), seedRows: seedRows
                )
            else { return nil }
            requests.append(remembered)
            index += 3
        }
        return (generation, requests)
    }

    /// Where the chunks of the snapshot and of the seed live (``EtcdBlob``).
    var chunksPrefix: String { prefix + "chunks/" }
    /// The snapshot: its pointer and its chunks.
    var snapshotBlob: EtcdBlob { EtcdBlob(pointerKey: snapshot, chunksPrefix: chunksPrefix + "snapshot/") }
    /// The seed: its pointer and its chunks.
    var seedBlob: EtcdBlob { EtcdBlob(pointerKey: seed, chunksPrefix: chunksPrefix + "seed/") }

    /// What to say of a log entry whose value is not its events: the key, the start of the
    /// value, and what that means for this replica (`consequence`).
    static func damage(at kv: EtcdKeyValue, _ consequence: String) -> String {
        let shown = CountryName.quoted(String(decoding: kv.value.prefix(48), as: UTF8.self))
        return
            "the key \(kv.key) in etcd holds \(shown)\(kv.value.count > 48 ? "..." : ""), not the events its key names: \(consequence)"
    }

    /// A remembered request as stored: the canonical request (empty when unknown), a newline,
    /// the reply, or, for a reset's, the reset's marker (``EtcdResetMarker``), from which the
    /// reply is made again. Neither holds a raw newline: both are compact JSON.
    static func encode(_ remembered: RememberedRequest, reference: EtcdResetMarker? = nil) -> Data {
        var value = Data(remembered.request ?? [])
        value.append(0x0A)
        if let reference {
            value.append(reference.encoded)
        } else {
            value.append(contentsOf: remembered.reply)
        }
        return value
    }

    /// The remembered request stored under `id`, a reset's reply made again from its marker
    /// with the seed's rows; nil when the value is not one.
    static func decodeRequest(id: String, _ value: Data, seedRows: [IndexedCountry]) -> RememberedRequest? {
        guard let newline = value.firstIndex(of: 0x0A) else { return nil }
        let request = value[value.startIndex..<newline]
        var reply = Data(value[(newline + 1)...])
        if let marker = EtcdResetMarker(reply) { reply = marker.reply(seedRows: seedRows) }
        return RememberedRequest(id: id, request: request.isEmpty ? nil : Array(request), reply: Array(reply))
    }
}
