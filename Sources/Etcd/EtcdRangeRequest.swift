/// A range of keys to read (alone, in a txn, or to watch): `[key, rangeEnd)`, or the key alone.
public struct EtcdRangeRequest: Sendable {
    /// Which field a range is sorted by.
    public enum SortTarget: String, Sendable {
        case key = "KEY"
        case version = "VERSION"
        case createRevision = "CREATE"
        case modRevision = "MOD"
        case value = "VALUE"
    }

    /// Which way a range is sorted; `none` is etcd's default (by key, ascending).
    public enum SortOrder: String, Sendable {
        case none = "NONE"
        case ascending = "ASCEND"
        case descending = "DESCEND"
    }

    /// The first key.
    public var key: String
    /// The first key's bytes, in place of ``key``, when they are not UTF-8: the page after a key
    /// that is not (``EtcdKeyValue/keyBytes``).
    public var keyBytes: [UInt8]?
    /// The end of the range, excluded; nil for the key alone.
    public var rangeEnd: String?
    /// Most keys returned; 0 for no limit.
    public var limit: Int = 0
    /// The revision to read at; 0 for the latest.
    public var revision: Int64 = 0
    /// Only keys and revisions, no values.
    public var keysOnly = false
    /// Only the count.
    public var countOnly = false
    /// The field the keys are sorted by.
    public var sortTarget: SortTarget = .key
    /// The order the keys are sorted in.
    public var sortOrder: SortOrder = .none
    /// Read the member's local copy instead of a linearizable read through the leader: faster,
    /// answers without quorum, and may be stale.
    public var serializable = false

    /// A range of `key` up to `rangeEnd` (excluded), or the key alone when `rangeEnd` is nil.
    public init(
        key: String, rangeEnd: String? = nil, limit: Int = 0, revision: Int64 = 0,
        keysOnly: Bool = false, countOnly: Bool = false, sortTarget: SortTarget = .key,
        sortOrder: SortOrder = .none, serializable: Bool = false
    ) {
        self.key = key
        self.rangeEnd = rangeEnd
        self.limit = limit
        self.revision = revision
        self.keysOnly = keysOnly
        self.countOnly = countOnly
        self.sortTarget = sortTarget
        self.sortOrder = sortOrder
        self.serializable = serializable
    }

    /// Every key that starts with `prefix` (every key at all when it is empty).
    public static func prefix(
        _ prefix: String, limit: Int = 0, revision: Int64 = 0, keysOnly: Bool = false,
        countOnly: Bool = false, sortTarget: SortTarget = .key, sortOrder: SortOrder = .none,
        serializable: Bool = false
    ) -> EtcdRangeRequest {
        EtcdRangeRequest(
            key: prefix.isEmpty ? "\u{0}" : prefix, rangeEnd: prefixEnd(prefix), limit: limit,
            revision: revision, keysOnly: keysOnly, countOnly: countOnly, sortTarget: sortTarget,
            sortOrder: sortOrder, serializable: serializable)
    }

    /// The keys from `start` (included) to the end of the keys that start with `prefix`: the
    /// next page of a prefix, `start` being the last key read plus `"\0"`.
    public static func from(
        _ start: String, toPrefixEnd prefix: String, limit: Int = 0, revision: Int64 = 0,
        keysOnly: Bool = false, sortTarget: SortTarget = .key, sortOrder: SortOrder = .none,
        serializable: Bool = false
    ) -> EtcdRangeRequest {
        EtcdRangeRequest(
            key: start, rangeEnd: prefixEnd(prefix), limit: limit, revision: revision, keysOnly: keysOnly,
            sortTarget: sortTarget, sortOrder: sortOrder, serializable: serializable)
    }

    /// The request for the page after `page`, this request's answer: from just after its last
    /// key, at this request's revision (or, for a read of the latest, the one `page` was read
    /// at), so the pages together are one read. Nil when `page` was the last.
    public func next(after page: EtcdRangeResponse) -> EtcdRangeRequest? {
        guard page.more, let last = page.kvs.last else { return nil }
        var next = self
        next.key = last.key + "\u{0}"
        next.keyBytes = last.keyBytes.map { $0 + [0] }
        // The answer's revision is etcd's newest, even for a read at an older one.
        if revision == 0 { next.revision = page.revision }
        return next
    }

    /// The smallest string above every string that starts with `prefix`: the prefix with its last
    /// character replaced by the next one (for ASCII, its last byte + 1). UTF-8 keeps the order of
    /// code points and no character's encoding is the start of another's, so this holds for any
    /// key a `String` can be. `"\0"` (etcd's "to the end") for the empty prefix or one made only
    /// of U+10FFFF.
    public static func prefixEnd(_ prefix: String) -> String {
        // The usual prefix ends in ASCII below DEL: its last byte + 1, without the scalars.
        var bytes = Array(prefix.utf8)
        if let last = bytes.last, last < 0x7F {
            bytes[bytes.count - 1] = last + 1
            return String(decoding: bytes, as: UTF8.self)
        }
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if (0xD800...0xDFFF).contains(next) { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                var end = String.UnicodeScalarView()
                end.append(contentsOf: scalars)
                end.append(scalar)
                return String(end)
            }
        }
        return "\u{0}"
    }
}
