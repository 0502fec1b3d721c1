import CountriesCore
import Foundation

/// What the command handler needs from a store: the state at start, the request-id memory, the
/// retained events, and one commit per batch. ``SQLiteStore`` keeps them in SQLite;
/// ``MemoryStore``, for `--in-memory`, in plain Swift values; another kind of store conforms the
/// same way and is chosen in ``StoreOpener``.
///
/// Opening and loading fail with a ``StoreOpenError`` (the service cannot start: it says what to do
/// with the store); everything after fails with a ``StateStoreError``, which the handler turns
/// into a `storage_error` reply while the service carries on.
public protocol StateStore: AnyObject {
    /// A path for `status`, or `:memory:`.
    var path: String { get }
    /// The store's identity (``StoreIdentity``): made when the store was created, kept across
    /// restarts and resets, new for every in-memory store and for a file found to be a copy.
    var identity: String { get }
    /// Bytes on disk (0 in memory).
    var sizeOnDisk: Int { get }
    /// The state as stored.
    func loadState() throws(StoreOpenError) -> CountriesState
    /// The request remembered under this id, with its first reply, if it is remembered.
    func rememberedRequest(for id: String) throws(StateStoreError) -> RememberedRequest?
    /// The first `limit` events after `since`; nil when some are no longer kept or `since` is
    /// ahead.
    func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(StateStoreError) -> [Event]?
    /// The oldest seq whose event is kept (`currentSeq + 1` when none is).
    func oldestRetainedSeq(currentSeq: UInt64) throws(StateStoreError) -> UInt64
    /// Writes a batch: all of it, or (when it throws) nothing.
    ///
    /// A shared store (``isShared``) writes it only if the store is still at `batch.basis` and
    /// none of its request ids is remembered yet; else it throws ``StateStoreError/Code/moved``
    /// with the ids it found remembered, and the handler catches up and tries again.
    func commit(_ batch: StoreBatch) throws(StateStoreError)

    /// Whether other services write this store too (etcd, docs/HA.md). Then the handler's state
    /// may be behind the store's: a commit is conditional on the seq it was computed from, reads
    /// catch up first (``catchUp(_:)``), request ids are checked by the commit itself, and
    /// events are published from the store's own log, not from the handler.
    var isShared: Bool { get }

    /// `state` brought up to the store's latest committed seq (a linearizable read): for a shared
    /// store, before a read is answered and after a commit was refused as
    /// ``StateStoreError/Code/moved``.
    func catchUp(_ state: CountriesState) throws(StateStoreError) -> CountriesState

    /// Why changes cannot be committed now, before trying (a shared store that lost its
    /// cluster's quorum); nil when they can.
    var unavailability: String? { get }

    /// What `status` adds about the store's cluster (replicas, members, leader), if any.
    func clusterStatus(into status: inout ServiceStatus)

    /// The seed list kept in the store itself (a shared store: every replica resets to it,
    /// whatever `--seed` it was given); nil when the service's own seed is the one.
    var storedSeed: [Country]? { get }

    /// Request ids of changes the store forgot while younger than the age floor, since it was
    /// opened, because it held its most ids or bytes of them (docs/PROTOCOL.md, "Retries are
    /// safe"): a retry of one of them would be applied again.
    var requestIDsForgottenYoung: Int { get }

    /// Most changes one commit may hold (a shared store's transactions are bounded).
    var maximumChangesPerCommit: Int { get }
    /// Event bytes (``CountriesCore/Event/estimatedBytes``) after which a commit holds no more
    /// changes; one change is always taken.
    var maximumEventBytesPerCommit: Int { get }

    /// Whether requests that arrive together should share one commit (group commit): true
    /// when a commit costs something worth sharing (a sync, a round trip to etcd). A store
    /// whose commit costs nothing answers each request as soon as it is handled instead, so
    /// no reply waits for the rest of its batch.
    var groupsCommits: Bool { get }

    /// Whether a commit can neither fail nor outlive the process (memory): then a batch's
    /// replies may go out before the store records it, since nothing reads the store between
    /// the two (``CommandHandler`` reads the next request only after).
    var commitCannotFail: Bool { get }

    /// Why the store can no longer be written where it was opened, or nil: its file was moved,
    /// replaced or deleted under the service (a restart would open another file, without the
    /// changes acknowledged since). Once it says so it always does; the service then refuses
    /// every change and stops (docs/RELIABILITY.md, "A store moved under the service").
    func lostPlace() -> String?

    /// What ``lostPlace()`` last found, without looking again: a commit looks before it writes,
    /// so the loop reads this after a batch instead of looking a second time.
    var knownLostPlace: String? { get }
}

/// What one commit writes: the events of a batch of changes (in seq order) and the requests to
/// remember with their replies.
public struct StoreBatch {
    /// The events, in seq order.
    public var events: [Event] = []
    /// The events' encodings when the handler made them already (it publishes the same bytes);
    /// empty, or one per event.
    public var encodedEvents: [[UInt8]] = []
    /// The ids of the batch's changes, remembered with their replies.
    public var requests: [RememberedRequest] = []
    /// The ids of the batch's refusals and no-ops: not remembered (they changed nothing, and must
    /// not push a change's id out), but a shared store checks them like `requests`, since one
    /// may be the retry of a change another replica committed.
    public var checkedIDs: [String] = []
    /// The seq of the state the batch was computed from.
    public var basis: UInt64 = 0
    /// The state after the batch (a shared store snapshots it now and then).
    public var state: CountriesState?

    /// An empty batch.
    public init() {}

    /// Nothing to write.
    public var isEmpty: Bool { events.isEmpty && requests.isEmpty }

    /// The encoding of `events[index]`: made once, by the handler, or now.
    public func encodedEvent(_ index: Int) -> [UInt8] {
        encodedEvents.count == events.count ? encodedEvents[index] : events[index].encoded(as: [UInt8].self)
    }
}

/// A read or a commit of a running store failed; nothing was written. Whatever the kind of
/// store, the service replies `storage_error` ("retry later") and goes on.
public struct StateStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is known of the outcome.
    public enum Code: Equatable, Sendable {
        /// Nothing was written.
        case failed
        /// Nothing was written because the store's cluster has no quorum (a shared store).
        case noQuorum
        /// A commit was sent and no answer said whether it was written: it may have been.
        case outcomeUnknown
        /// Nothing was written: the batch is bigger than one transaction of the store may be
        /// (a shared store; the message says by how much). A batch of several changes is
        /// committed in parts; a change alone is refused `too_large`.
        case tooLarge
        /// Nothing was written: the store's database is full (etcd's alarm NOSPACE); the
        /// message says what to do.
        case noSpace
        /// Nothing was written: another service moved the store past the batch's basis, or
        /// remembered one of its ids first (`remembered`). Catch up and try again.
        case moved
    }

    /// What is known of the outcome.
    public var code: Code
    /// What failed, in the store's own words: `commit failed: database is locked (SQLITE_BUSY)`.
    public var message: String
    /// With ``Code/moved``: the batch's request ids that were found remembered.
    public var remembered: [RememberedRequest]
    /// With ``Code/moved``: the events after the batch's basis, when the store read them with
    /// its refusal (so catching up takes no second round trip); empty when it did not.
    public var newerEvents: [Event]

    /// A failure that says `message`, with what is known of the outcome.
    public init(
        _ message: String, code: Code = .failed, remembered: [RememberedRequest] = [],
        newerEvents: [Event] = []
    ) {
        self.code = code
        self.message = message
        self.remembered = remembered
        self.newerEvents = newerEvents
    }

    /// The message.
    public var description: String { message }
}

extension StateStore {
    /// A store of one service: nobody else writes it.
    public var isShared: Bool { false }

    /// Nobody else writes the store, so `state` is its latest.
    public func catchUp(_ state: CountriesState) throws(StateStoreError) -> CountriesState { state }

    /// A local store can always try.
    public var unavailability: String? { nil }

    /// Nothing beyond the store itself.
    public func clusterStatus(into status: inout ServiceStatus) {}

    /// A store that keeps no ids of its own, or forgets none before their age.
    public var requestIDsForgottenYoung: Int { 0 }

    /// The service's own seed is the one.
    public var storedSeed: [Country]? { nil }

    /// A batch is one local transaction, whatever its size.
    public var maximumChangesPerCommit: Int { .max }
    /// Whatever its size.
    public var maximumEventBytesPerCommit: Int { .max }

    /// A commit costs a sync or a round trip: worth sharing.
    public var groupsCommits: Bool { true }

    /// A commit writes something that can fail (a file, a cluster).
    public var commitCannotFail: Bool { false }

    /// A store of no file of its own (memory, a cluster) stays where it is.
    public func lostPlace() -> String? { nil }

    /// Nothing found, for a store that never looks.
    public var knownLostPlace: String? { nil }

    /// The reply first sent to the request with this id, if it is remembered.
    public func rememberedReply(for id: String) throws(StateStoreError) -> [UInt8]? {
        try rememberedRequest(for: id)?.reply
    }

    /// Every event after `since` (tests, and callers that bound the count themselves).
    public func events(after since: UInt64, currentSeq: UInt64) throws(StateStoreError) -> [Event]? {
        try events(after: since, currentSeq: currentSeq, limit: .max)
    }
}
