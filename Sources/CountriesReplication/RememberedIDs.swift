import Foundation

/// The request ids of the live generations, as one replica knows them (docs/HA.md, "Request
/// ids"): commits check ids here, not with a compare per id in etcd.
///
/// It is complete up to ``knownThrough``: every id a commit up to that seq remembered is here.
/// A commit staged on seq S is checked after the memory reached S, and its seq compare refuses
/// it if any commit came after S, so an id committed anywhere is never applied twice.
///
/// It keeps where each id's first reply is, not the reply: a retry is rare, and the window
/// holds up to 200,000 ids. With the replies, a replica's memory grew by about 830 bytes per
/// id (docs/BENCHMARKS.md, "Stop 38"). Plain values only: ``EtcdIDMemory`` reads etcd and feeds it.
struct RememberedIDs {
    /// Where an id's request and first reply are kept.
    struct Entry: Equatable {
        /// The generation the id went into: it is forgotten when that one is no longer live.
        var generation: UInt64
        /// The seq of the id log's entry that holds it (`idlog/<seq>`), or nil for an id kept in
        /// a key of its own by a store from before the id log (`ids/<generation>/<id>`).
        var logSeq: UInt64?
    }

    /// What a generation's entries in the id log hold.
    struct Tally: Equatable {
        /// Ids.
        var count = 0
        /// Bytes of the entries' values.
        var bytes = 0
    }

    private(set) var entries: [String: Entry] = [:]
    /// Every id of a commit up to this seq is known; nil until the first load.
    private(set) var knownThrough: UInt64?
    /// What each live generation's entries in the id log hold: with what its key says of the
    /// ids kept before the log, how full it is (the key is written only when one opens).
    private var logged: [UInt64: Tally] = [:]
    /// How many of ``entries`` each generation holds, so forgetting the ones before a
    /// generation looks at the generations, not at every id (a commit asks it each time).
    private var idsPerGeneration: [UInt64: Int] = [:]

    /// Takes ids remembered in `generation`, kept in the id log's entry at `logSeq` of `bytes`
    /// (nil: in keys of their own, counted in the generation's key). An entry learned twice (a
    /// refused commit's reads and a catch-up may both bring it) counts once, and the first
    /// place an id is known stays (a commit never remembers an id another one did).
    mutating func learn(_ ids: [String], generation: UInt64, logSeq: UInt64?, bytes: Int = 0) {
        if let logSeq, let first = ids.first, entries[first]?.logSeq == logSeq { return }
        for id in ids where entries[id] == nil {
            entries[id] = Entry(generation: generation, logSeq: logSeq)
            idsPerGeneration[generation, default: 0] += 1
        }
        if logSeq != nil {
            logged[generation, default: Tally()].count += ids.count
            logged[generation, default: Tally()].bytes += bytes
        }
    }

    /// What `generation`'s entries in the id log hold, as far as known.
    func tally(of generation: UInt64) -> Tally {
        logged[generation] ?? Tally()
    }

    /// Every commit up to `seq` has been learned (it remembered no ids, or they were learned).
    mutating func reached(_ seq: UInt64) {
        knownThrough = max(knownThrough ?? 0, seq)
    }

    /// Drops the ids of generations before `generation`, which are no longer live.
    mutating func forget(before generation: UInt64) {
        if logged.keys.contains(where: { $0 < generation }) {
            logged = logged.filter { $0.key >= generation }
        }
        guard idsPerGeneration.keys.contains(where: { $0 < generation }) else { return }
        idsPerGeneration = idsPerGeneration.filter { $0.key >= generation }
        entries = entries.filter { $0.value.generation >= generation }
    }

    /// Forgets one id, whose place is gone from etcd (its generation was deleted).
    mutating func forget(_ id: String) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        idsPerGeneration[entry.generation, default: 1] -= 1
        if idsPerGeneration[entry.generation] == 0 { idsPerGeneration[entry.generation] = nil }
    }

    /// Forgets everything, before the ids are read again from the start.
    mutating func reset() {
        entries = [:]
        logged = [:]
        idsPerGeneration = [:]
        knownThrough = nil
    }

    /// The ids among `ids` that are remembered, each once, in the order asked, with where.
    /// Linear in `ids`: those already found are a set, so a batch of retries that are all
    /// remembered costs no more per id than one.
    func remembered(among ids: [String]) -> [(id: String, entry: Entry)] {
        var found: [(id: String, entry: Entry)] = []
        var seen = Set<String>()
        for id in ids {
            guard let entry = entries[id], seen.insert(id).inserted else { continue }
            found.append((id, entry))
        }
        return found
    }
}
