import CountriesCore

/// Which request ids a store this process owns alone (SQLite, memory) keeps, decided in one
/// place for both (docs/PROTOCOL.md, "Retries are safe"): an id is kept while it is among the
/// newest ``minimumCount`` or younger than ``minimumAge``, and never beyond ``maximumCount`` ids
/// or ``maximumBytes``, oldest first. Only changes' ids come here: a refusal or a no-op is not
/// remembered, so no flood of them can push a change's id out.
///
/// Ids are kept in the order they were remembered, with the time they were committed (made
/// monotonic, so a clock stepping back cannot keep an old id behind a young one).
public struct RequestIDRetention: Sendable {
    /// One remembered id.
    public struct Entry: Sendable, Equatable {
        /// Where the store keeps it (the SQLite row's ordinal; a counter in memory).
        public var ordinal: Int64
        /// The request id (empty when the store keeps its ids itself).
        public var id: String
        /// When it was committed, in milliseconds since 1970.
        public var milliseconds: Int64
        /// Its id, request and reply, in bytes.
        public var bytes: Int
    }

    /// An id younger than this is kept (up to the maximums).
    public var minimumAge: Duration = Limits.requestIDMinimumAge
    /// So are the newest this many ids (up to the maximums).
    public var minimumCount = Limits.retainedRequestIDs
    /// Never more ids than this.
    public var maximumCount = Limits.maximumRequestIDs
    /// Never more bytes than this.
    public var maximumBytes = Limits.maximumRequestIDBytesKept

    /// Kept entries, oldest first, from `head`.
    private var entries: [Entry] = []
    private var head = 0
    /// Ids kept.
    public var count: Int { entries.count - head }
    /// Bytes kept.
    public private(set) var bytes = 0
    /// The newest time remembered: an entry is never older than the one before it.
    private var newestMilliseconds = Int64.min
    /// Ids forgotten while younger than ``minimumAge`` (a maximum was passed), since this value
    /// was made: a retry of one of them would be applied again. Burst of changes with the longest
    /// names reach the byte maximum first: about 3.4 KB an id, 19,700 ids in 64 MiB.
    public private(set) var forgottenYoung = 0

    /// The protocol's bounds (``CountriesCore/Limits``).
    public init() {}

    /// Remembers an id committed at `milliseconds`, after every one remembered before.
    public mutating func remember(ordinal: Int64, id: String, bytes: Int, milliseconds: Int64) {
        newestMilliseconds = max(newestMilliseconds, milliseconds)
        entries.append(Entry(ordinal: ordinal, id: id, milliseconds: newestMilliseconds, bytes: bytes))
        self.bytes += bytes
    }

    /// Remembers an id of a store that keeps the ids itself and tells them apart by `ordinal`:
    /// its entry's ``Entry/id`` is empty. An entry holding the id's string would keep it alive
    /// until the id is forgotten, when freeing it costs a cache miss per id (docs/BENCHMARKS.md,
    /// "Stop 49").
    public mutating func remember(ordinal: Int64, bytes: Int, milliseconds: Int64) {
        remember(ordinal: ordinal, id: "", bytes: bytes, milliseconds: milliseconds)
    }

    /// Counts `extra` more bytes for the id remembered at `ordinal`, if it is kept: its reply,
    /// kept by reference, was written in full.
    public mutating func grow(ordinal: Int64, by extra: Int) {
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].ordinal < ordinal { low = middle + 1 } else { high = middle }
        }
        guard low < entries.count, entries[low].ordinal == ordinal else { return }
        entries[low].bytes += extra
        bytes += extra
    }

    /// How many of the oldest ids may be forgotten at `now` once `adding` ids of `addingBytes`
    /// more are remembered, and whether some of them must be (a maximum is passed).
    public func forgettable(nowMilliseconds now: Int64, adding: Int = 0, addingBytes: Int = 0)
        -> (count: Int, required: Bool)
    {
        var forgotten = 0
        var forgottenBytes = 0
        var required = false
        let total = count + adding
        let totalBytes = bytes + addingBytes
        let age = Int64(minimumAge.components.seconds) * 1000
        for entry in entries[head...] {
            let left = total - forgotten
            let over = left > maximumCount || totalBytes - forgottenBytes > maximumBytes
            let expired = left > minimumCount && now - entry.milliseconds >= age
            guard over || expired else { break }
            required = required || over
            forgotten += 1
            forgottenBytes += entry.bytes
        }
        return (forgotten, required)
    }

    /// Whether the id remembered at `ordinal` is still kept at `now` (it may wait in the store
    /// for the next trim, forgotten already).
    public func keeps(ordinal: Int64, nowMilliseconds now: Int64) -> Bool {
        let live = entries[head...]
        guard let first = live.first, ordinal >= first.ordinal else { return false }
        return ordinal > ordinalForgotten(through: forgettable(nowMilliseconds: now).count) ?? .min
    }

    /// The ordinal of the last of the `count` oldest ids, nil for none.
    public func ordinalForgotten(through count: Int) -> Int64? {
        count > 0 ? entries[head + min(count, self.count) - 1].ordinal : nil
    }

    /// Forgets the `count` oldest ids and takes each out of `table`, the store's ids by name,
    /// unless the table has it from a later remembering (another `ordinal`: the id was used
    /// again). One look-up per id: once a store holds its most ids, every commit forgets one,
    /// and comparing then removing hashed it twice (docs/BENCHMARKS.md, "Stop 48").
    @inlinable
    public mutating func forget<Value>(
        _ count: Int, nowMilliseconds now: Int64, from table: inout [String: Value], ordinal: (Value) -> Int64
    ) {
        for entry in forget(count, nowMilliseconds: now) {
            if let index = table.index(forKey: entry.id), ordinal(table[index].value) == entry.ordinal {
                table.remove(at: index)
            }
        }
    }

    /// Forgets the `count` oldest ids at `now`; returns them.
    public mutating func forget(_ count: Int, nowMilliseconds now: Int64) -> ArraySlice<Entry> {
        let end = head + min(count, self.count)
        let forgotten = entries[head..<end]
        for entry in forgotten { bytes -= entry.bytes }
        // Oldest first: the young ones, if any, are the last.
        let age = Int64(minimumAge.components.seconds) * 1000
        if let newest = forgotten.last, now - newest.milliseconds < age {
            forgottenYoung += forgotten.reversed().prefix { now - $0.milliseconds < age }.count
        }
        head = end
        if head > 4_096, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        return forgotten
    }
}
