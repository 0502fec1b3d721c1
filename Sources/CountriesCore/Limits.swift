/// The bounds that keep the service safe from careless or hostile input.
///
/// They are part of the contract: clients may rely on requests inside them being accepted.
public enum Limits {
    /// Longest country name, in characters (grapheme clusters), after trimming.
    public static let maximumNameLength = 100
    /// Most Unicode scalars in a name, so combining marks cannot make a "short" name huge.
    public static let maximumNameScalars = 400
    /// Most countries the list may hold.
    public static let maximumCountries = 10_000
    /// Longest request id, in bytes; an id is printable ASCII (0x20 to 0x7E), so bytes are
    /// characters. Every id of a change is stored with its reply, so this bounds the store too.
    public static let maximumRequestIDBytes = 64
    /// Largest request body, in bytes, that the service parses. Larger bodies get `too_large`.
    public static let maximumRequestBytes = 64 * 1024
    /// Deepest nesting of arrays and objects in any frame ``JSONParser`` reads (requests,
    /// replies, events, heartbeats, seed files), the outermost object or array counting as 1.
    /// A request needs 1 and the deepest reply 5 (`history`: reply, events, event, countries,
    /// country); deeper input is refused while it is parsed, so the parser's recursion, and the
    /// stack it takes, stay small whatever arrives.
    public static let maximumNesting = 16
    /// Most events in one `history` reply; the reply says `"more": true` when it stops short.
    /// Bounds the work and the memory one request can cost: 500 events are about 40 KB.
    public static let historyPageEvents = 500
    /// Bytes (as estimated before encoding) after which a `history` page stops, so pages of
    /// big `countries.reset` events stay small too; a page always holds at least one event.
    public static let historyPageBytes = 64 * 1024
    /// Events kept for `history`.
    public static let retainedEvents = 10_000
    /// Bytes of events a local store (SQLite, memory) keeps for `history`, whatever their
    /// number: 10,000 row events take at most 17.5 MB, but a reset of the longest list takes
    /// 16 MB, and counted only in events a store kept 10,000 of them (150 GB in a SQLite file).
    /// SQLite trims to it once half as much again has been written since its last trim; the
    /// in-memory store weighs only its resets against it (the row events' count bounds them).
    public static let retainedEventBytes = 64 << 20
    /// Request ids of changes (with their replies) remembered for exactly-once retries: at
    /// least this many of the newest, and every id younger than ``requestIDMinimumAge``.
    public static let retainedRequestIDs = 10_000
    /// The age floor of a change's request id: longer than any client's retries outlast
    /// (`countries` gives up after about 6 s). A burst of changes does not push an id out
    /// sooner, unless it passes ``maximumRequestIDs`` or ``maximumRequestIDBytesKept``.
    public static let requestIDMinimumAge: Duration = .seconds(600)
    /// The most request ids a store keeps, however young: what bounds a burst.
    public static let maximumRequestIDs = 100_000
    /// The most bytes of ids, requests and replies a store keeps, however young.
    public static let maximumRequestIDBytesKept = 64 << 20
    /// Bytes of a store's identity: 32 lowercase hex digits (docs/PROTOCOL.md, "Store identity").
    public static let storeIdentityBytes = 32
}
