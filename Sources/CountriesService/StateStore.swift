import CountriesCore
import Foundation

/// What the command handler needs from a store: the state at start, the request-id memory, the
/// retained events, and one commit per batch. ``Store`` keeps them in SQLite; ``MemoryStore``,
/// for `--in-memory`, in plain Swift values; another kind of store conforms the same way and is
/// chosen in ``StoreOpener``.
///
/// Opening and loading fail with a ``StoreError`` (the service cannot start: it says what to do
/// with the store); everything after fails with a ``StateStoreError``, which the handler turns
/// into a `storage_error` reply while the service carries on.
protocol StateStore: AnyObject {
    /// A path for `status`, or `:memory:`.
    var path: String { get }
    /// The store's identity (``StoreIdentity``): made when the store was created, kept across
    /// restarts and resets, new for every in-memory store and for a file found to be a copy.
    var identity: String { get }
    /// Bytes on disk (0 in memory).
    var sizeOnDisk: Int { get }
    /// The state as stored.
    func loadState() throws(StoreError) -> CountriesState
    /// The request remembered under this id, with its first reply, if it is remembered.
    func rememberedRequest(for id: String) throws(StateStoreError) -> RememberedRequest?
    /// The first `limit` events after `since`; nil when some are no longer kept or `since` is
    /// ahead.
    func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(StateStoreError) -> [Event]?
    /// The oldest seq whose event is kept (`currentSeq + 1` when none is).
    func oldestRetainedSeq(currentSeq: UInt64) throws(StateStoreError) -> UInt64
    /// Writes a batch: all of it, or (when it throws) nothing.
    func commit(_ batch: StoreBatch) throws(StateStoreError)
}

/// What one commit writes: the events of a batch of changes (in seq order) and the requests to
/// remember with their replies.
struct StoreBatch {
    var events: [Event] = []
    var requests: [RememberedRequest] = []

    var isEmpty: Bool { events.isEmpty && requests.isEmpty }
}

/// A read or a commit of a running store failed; nothing was written. Whatever the kind of
/// store, the service replies `storage_error` ("retry later") and goes on.
struct StateStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What failed, in the store's own words: `commit failed: database is locked (SQLITE_BUSY)`.
    var message: String

    init(_ message: String) {
        self.message = message
    }

    /// The message.
    var description: String { message }
}

extension StateStore {
    /// The reply first sent to the request with this id, if it is remembered.
    func rememberedReply(for id: String) throws(StateStoreError) -> Data? {
        try rememberedRequest(for: id)?.reply
    }

    /// Every event after `since` (tests, and callers that bound the count themselves).
    func events(after since: UInt64, currentSeq: UInt64) throws(StateStoreError) -> [Event]? {
        try events(after: since, currentSeq: currentSeq, limit: .max)
    }
}
