/// The folded names of a list's rows (``CountryName/foldedKey(_:)``), in row order, with a hash
/// of each beside them: finding a name compares machine words, and only a word that matches
/// compares strings.
///
/// A lookup by name (every change that names its country, and every `add`'s duplicate check)
/// compared the name with every row's string before: on a 10,000-row list, a toggle of the
/// last row by name took about 110 µs more than one of the first (docs/BENCHMARKS.md, "Stop
/// 31"). The hashes are plain integers, so a copy of a state (copy-on-write) copies them as
/// bytes, without a reference count per row. They are `String.hashValue`, seeded per process:
/// never stored or sent.
struct FoldedKeys: Equatable, Sendable {
    private var keys: [String]
    private var hashes: [Int]

    /// The folded keys of `names`, in order.
    init(_ names: some Sequence<String>) {
        keys = names.map(CountryName.foldedKey)
        hashes = keys.map(\.hashValue)
    }

    /// The folded key of row `index`.
    subscript(index: Int) -> String { keys[index] }

    /// The first row whose folded key is `key`, if any.
    func firstIndex(of key: String) -> Int? {
        let hash = key.hashValue
        return hashes.withUnsafeBufferPointer { words in
            for index in words.indices where words[index] == hash && keys[index] == key { return index }
            return nil
        }
    }

    /// Adds the key of a new last row (already folded).
    mutating func append(_ key: String) {
        keys.append(key)
        hashes.append(key.hashValue)
    }

    /// Removes the key of row `index`.
    mutating func remove(at index: Int) {
        keys.remove(at: index)
        hashes.remove(at: index)
    }
}
