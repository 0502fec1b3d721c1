/// Finds a request id among the ids a batch has gathered so far (its staged changes, the
/// requests a commit remembers), each with a value: whether the id came before in the batch,
/// and what is known of it.
///
/// The batch's entries stay the caller's; they only grow at their end until ``removeAll()``.
/// While there are few they are compared one by one, with nothing kept here; past
/// ``comparedDirectly`` they are hashed into a table as they come. Noting and finding an id by
/// hash costs about as much as comparing it with eight others, so below about sixteen ids
/// comparing is cheaper, and past them the comparisons grow with the square of the batch (at
/// 64 clients they were 9 % of a toggle's instructions, and a DEALER pipelining 256 requests
/// makes batches four times as long: docs/BENCHMARKS.md, "Stop 53").
struct BatchIDTable<Value> {
    /// Up to this many entries are compared one by one.
    static var comparedDirectly: Int { 16 }

    private var hashed: [String: Value] = [:]
    /// How many of the caller's entries are in `hashed`.
    private var indexed = 0

    /// An empty table.
    init() {}

    /// The value of the last of the caller's `count` entries whose id is `id`, or nil when none
    /// is; `entry(index)` gives the id (nil for none) and the value of the entry at `index`.
    mutating func find(_ id: String, among count: Int, entry: (Int) -> (id: String?, value: Value)) -> Value?
    {
        if count < indexed {
            // Not grown at the end since: start over rather than answer from stale entries.
            removeAll()
        }
        if count <= Self.comparedDirectly && indexed == 0 {
            for index in stride(from: count - 1, through: 0, by: -1) {
                let candidate = entry(index)
                if candidate.id == id { return candidate.value }
            }
            return nil
        }
        while indexed < count {
            let candidate = entry(indexed)
            // Later entries replace earlier ones, as the comparisons find the last.
            if let key = candidate.id { hashed[key] = candidate.value }
            indexed += 1
        }
        return hashed[id]
    }

    /// Forgets the entries: the caller's batch was emptied.
    mutating func removeAll() {
        guard indexed > 0 else { return }
        hashed = [:]
        indexed = 0
    }
}
