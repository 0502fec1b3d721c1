import CountriesCore
import CountriesStore
import Etcd
import Foundation
import SystemSupport

/// The state kept in etcd, shared by every replica on the same prefix (`countries serve --etcd`,
/// docs/HA.md). Replicas take turns by compare-and-swap: a commit is one etcd transaction that
/// applies only if the `seq` key still holds the seq the batch was computed from; its request ids
/// were checked before it against this replica's memory of the remembered ones (``EtcdIDMemory``),
/// complete up to that seq. It writes the events (one entry of the log), the new seq, the
/// remembered requests (one entry of the id log) and, every ``snapshotInterval`` seqs, a snapshot
/// of the whole list (apart, ``SnapshotWriter``). When another replica moved first, nothing is
/// written, the replica learns the ids that commit remembered, and the handler catches up and runs
/// the batch again.
///
/// Used from the service's thread only; the tail and the probe have connections of their own.
public final class EtcdStore: StateStore {
    /// The prefix, for messages (`etcd PREFIX`).
    public let path: String
    /// The store's identity, kept under the prefix.
    public let identity: String
    /// Nothing on this disk: the store is in etcd.
    public var sizeOnDisk: Int { 0 }
    /// Other replicas commit to it too.
    public var isShared: Bool { true }
    /// Whether this replica seeded the prefix, for the start-up log.
    public let seeded: Bool
    /// The store's seed list (``EtcdLayout/seed``): every replica's `reset` goes back to it.
    public let storedSeed: [Country]?
    /// Set when this replica was given another seed than the store's, for the start-up log.
    public let seedMismatch: String?
    /// The seed's rows: what a reset's marker in etcd stands for (``EtcdResetMarker``).
    let seedRows: [IndexedCountry]
    /// The seq of the newest snapshot this replica knows of (read or written; 0 for the seed):
    /// no commit deletes an event after it, so the snapshot and the events after it are the state.
    var knownSnapshotSeq: UInt64 { max(readSnapshotSeq, snapshotWriter?.knownSeq ?? 0) }
    /// The newest snapshot's seq as this replica read it (the writer knows the ones it wrote).
    private var readSnapshotSeq: UInt64 = 0
    /// Started by the first snapshot to write.
    private var snapshotWriter: SnapshotWriter?
    /// How far apart the snapshot writer starts its writes (set before the first commit; tests
    /// that count on every snapshot written at once set zero).
    var snapshotSpacing = SnapshotWriter.spacing
    /// How long a look for the oldest kept event stands (``EtcdEventLog/oldestLookInterval``);
    /// tests that trim and look again set it to zero.
    var oldestLookInterval: Duration {
        get { eventLog.oldestLookInterval }
        set { eventLog.oldestLookInterval = newValue }
    }
    /// Where this replica's last trim of old events ended: every event before it is gone, so
    /// the next trim deletes from here. A delete from the prefix's start walks every deleted
    /// event etcd still keeps until it compacts (up to 10,000 revisions), which doubled a
    /// commit's time (docs/BENCHMARKS.md, "Stop 27"); nil until this process first trims.
    private var trimmedBefore: UInt64?
    /// A snapshot is written when a commit crosses a multiple of this seq, so a start reads the
    /// snapshot and at most about this many events (and a second's more: the writer spaces its
    /// writes, ``SnapshotWriter/spacing``).
    static let snapshotInterval: UInt64 = 100
    /// Most changes in one transaction: as many as one entry of the event log holds, which is
    /// how far a read that may start inside an entry looks back (``EtcdLayout/eventsPerEntry``).
    static let changesPerCommit = EtcdLayout.eventsPerEntry
    /// etcd's default `--max-txn-ops`: the most operations on one side of a transaction.
    static let operationsPerTransaction = 128

    /// At most ``changesPerCommit``: etcd bounds a transaction.
    public var maximumChangesPerCommit: Int { EtcdStore.changesPerCommit }

    /// etcd refuses a request over its `--max-request-bytes` (1.5 MiB by default); a reset is
    /// kept as a marker and the snapshot is written apart, so events are small, and a batch
    /// over ``EtcdConfiguration/requestBudget`` as sent is split anyway (``commit(_:)``).
    public var maximumEventBytesPerCommit: Int { 256 * 1024 }

    private let client: EtcdClient
    private let layout: EtcdLayout
    private let health: ClusterHealth
    /// The reads of the log: replays, `history`'s events, the oldest kept.
    private let eventLog: EtcdEventLog
    private let configuration: EtcdConfiguration
    private let logger: Logger
    /// How long request ids are remembered.
    let window: RequestIDWindow
    /// The ids of the live generations, and the generation: what a commit checks its ids
    /// against.
    private let ids: EtcdIDMemory
    /// The request-id generation's key as this replica last saw it in etcd (how full the
    /// generation is adds what its entries in the id log hold, ``EtcdIDMemory/logged``).
    var generation: RequestIDWindow.Generation { ids.generation }

    /// Finds the store under the prefix, or seeds it in one transaction when the prefix is empty
    /// (the first replica wins; the others find it). Waits up to the configuration's start
    /// timeout for a quorum.
    public init(
        configuration: EtcdConfiguration, seed: [Country], health: ClusterHealth, logger: Logger,
        window: RequestIDWindow = RequestIDWindow()
    ) throws(StoreOpenError) {
        self.configuration = configuration
        self.logger = logger
        self.window = window
        self.health = health
        layout = EtcdLayout(prefix: configuration.prefix)
        path = "etcd \(configuration.endpoints.joined(separator: ",")) \(configuration.prefix)"
        client = EtcdClient(
            endpoints: configuration.endpoints, timeout: configuration.requestTimeout,
            security: configuration.security, memberHealth: health.members)
        let opened = try EtcdStoreOpening.open(
            seed: seed, client: client, layout: layout, configuration: configuration, path: path,
            logger: logger)
        identity = opened.identity
        seeded = opened.seeded
        storedSeed = opened.seed
        seedRows = CountriesState(countries: opened.seed).rows
        seedMismatch =
            opened.seed == seed
            ? nil
            : "this replica was given a seed of \(seed.count) countries, but the store keeps the seed it was created with (\(opened.seed.count) countries): `reset` goes back to the store's (docs/HA.md)"
        eventLog = EtcdEventLog(client: client, layout: layout, seedRows: seedRows, health: health)
        do {
            ids = try EtcdIDMemory(
                generation: opened.generation, client: client, layout: layout, seedRows: seedRows,
                logger: logger)
        } catch {
            throw StoreOpenError(
                .cannotOpen, path: path, "reading the remembered request ids failed: \(error)")
        }
    }

    // MARK: Reading

    /// The state at start. A log damaged after the snapshot does not stop the replica: it serves
    /// `status` with the state up to the damage, says what is damaged, and refuses the rest.
    public func loadState() throws(StoreOpenError) -> CountriesState {
        do {
            return try readState(uptoDamage: true)
        } catch {
            throw StoreOpenError(.cannotOpen, path: path, "reading the state from etcd failed: \(error)")
        }
    }

    /// The snapshot and the events after it, read at one revision; with `uptoDamage`, the state
    /// before a value that does not decode instead of an error.
    private func readState(uptoDamage: Bool = false) throws(StateStoreError) -> CountriesState {
        // The snapshot's revision is the pointer's: the events are read from that one on (a
        // replica that trims them knows a snapshot at least as new).
        let (stored, revision) = try EtcdStore.readBlob(layout.snapshotBlob, client: client)
        var state: CountriesState
        if let value = stored.value {
            guard let event = try? Event.decode(value), case .reset(let rows) = event.kind else {
                throw StateStoreError("the key \(layout.snapshot) holds no snapshot of the list")
            }
            state = CountriesState(rows: rows, seq: event.seq)
        } else {
            // No snapshot yet: the seed, at seq 0, is one.
            state = CountriesState(rows: seedRows, seq: 0)
        }
        readSnapshotSeq = max(readSnapshotSeq, state.seq)
        let snapshotSeq = state.seq
        let complete: Bool
        do {
            complete = try eventLog.replay(into: &state, atRevision: revision)
        } catch {
            if uptoDamage && health.damage != nil { return state }
            throw error
        }
        guard complete else {
            throw StateStoreError("the events after the snapshot at seq \(snapshotSeq) are missing")
        }
        return state
    }

    /// `state` with the events other replicas committed since, never ending below a seq this
    /// replica knows is committed.
    ///
    /// etcd 3.4 was seen to answer a linearizable read from a revision behind one already read
    /// (docs/BENCHMARKS.md, "Stop 28"). A catch-up that ends below the seq the quorum probe
    /// read is such an answer: it is read again, up to ``catchUpReads`` times, and then refused
    /// (`storage_error`) rather than answered from behind a change another replica acknowledged.
    public func catchUp(_ state: CountriesState) throws(StateStoreError) -> CountriesState {
        let known = health.latestSeq
        var reached = state.seq
        for attempt in 0..<Self.catchUpReads {
            // A member behind catches up in milliseconds: give it 10, then 20.
            if attempt > 0 { Thread.sleep(forTimeInterval: 0.01 * Double(attempt)) }
            var caughtUp = state
            if try !eventLog.replay(into: &caughtUp, atRevision: 0) {
                // Too far behind for the kept events: start again from the snapshot.
                caughtUp = try readState()
            }
            if caughtUp.seq >= known {
                health.recordLogReadable()
                return caughtUp
            }
            reached = caughtUp.seq
            let next = attempt + 1 < Self.catchUpReads ? "read again" : "the read is refused"
            logger.log(
                .warning,
                "etcd answered a catch-up up to seq \(reached), behind seq \(known) this replica knows is committed: \(next)"
            )
        }
        throw StateStoreError(
            "etcd's answers end at seq \(reached), behind seq \(known) this replica knows is committed (a member that lags)"
        )
    }

    /// How many times a catch-up that ends below a known committed seq is read (30 ms in all).
    static let catchUpReads = 3

    /// The id as the live generations remember it, nil when unknown: this replica's memory of
    /// them, brought up to the latest commit first.
    public func rememberedRequest(for id: String) throws(StateStoreError) -> RememberedRequest? {
        try ids.request(for: id)
    }

    /// The events after `since`, from the log in etcd; nil when they are no longer kept.
    public func events(after since: UInt64, currentSeq: UInt64, limit: Int) throws(StateStoreError)
        -> [Event]?
    {
        try eventLog.events(after: since, currentSeq: currentSeq, limit: limit)
    }

    /// The seq of the oldest event still under the prefix, up to `currentSeq` (`currentSeq + 1`
    /// when none is kept): looked for in windows from the last one found (``EtcdEventLog``).
    public func oldestRetainedSeq(currentSeq: UInt64) throws(StateStoreError) -> UInt64 {
        try eventLog.oldestRetainedSeq(currentSeq: currentSeq)
    }

    // MARK: Writing

    /// Why this replica refuses changes now (no quorum, say), from ``ClusterHealth``.
    public var unavailability: String? { health.unavailability() }

    /// Commits `batch` in one etcd transaction (``EtcdCommit``), if the seq it was staged at is
    /// still the newest.
    public func commit(_ batch: StoreBatch) throws(StateStoreError) {
        // An entry of the id log is keyed by its batch's first change.
        guard batch.requests.isEmpty || !batch.events.isEmpty else {
            throw StateStoreError("a batch remembers \(batch.requests.count) request id(s) but has no change")
        }
        // Readers look back one entry's width at most, and trims keep that much.
        guard batch.events.count <= EtcdLayout.eventsPerEntry else {
            throw StateStoreError(
                "a batch of \(batch.events.count) changes is more than one entry of the event log holds (\(EtcdLayout.eventsPerEntry)); nothing changed"
            )
        }
        // The ids are checked here, on a memory complete up to the basis; the seq compare
        // refuses the commit if anything came after it.
        try ids.learn(through: batch.basis)
        let known = try ids.requests(among: batch.requests.map(\.id) + batch.checkedIDs)
        if !known.isEmpty {
            throw StateStoreError("a request id is remembered already", code: .moved, remembered: known)
        }
        let commit = EtcdCommit(
            batch, layout: layout, identity: identity, seedRows: seedRows,
            knowing: EtcdCommit.Knowledge(
                generation: generation, logged: ids.logged, window: window,
                knownSnapshotSeq: knownSnapshotSeq,
                trimmedBefore: trimmedBefore, nowMilliseconds: ids.windowNowMilliseconds()))
        // Encoded once: its size is budgeted, and the same bytes are sent.
        let encoded = EtcdEncodedTxn(
            compare: commit.compare, success: commit.success, failure: commit.failure)
        let bytes = encoded.byteCount
        if bytes > configuration.requestBudget {
            throw StateStoreError(
                "the change takes \(bytes) bytes in its etcd transaction, \(bytes - configuration.requestBudget) over the budget of \(configuration.requestBudget) bytes per transaction (etcd refuses requests over its --max-request-bytes); nothing changed",
                code: .tooLarge)
        }
        let result: EtcdTxnResponse
        let sent = ContinuousClock.now
        do {
            result = try client.txn(encoded)
        } catch {
            throw noteNoSpace(EtcdStore.storeError(error, during: "commit"))
        }
        health.recordWritable()
        let lastSeq = commit.lastSeq
        if result.succeeded {
            ids.committed(
                batch.requests.map(\.id), generation: commit.written, logSeq: batch.events.first?.seq,
                bytes: commit.idLogBytes, through: lastSeq)
            if let trimmedTo = commit.trimmedTo { trimmedBefore = trimmedTo }
            // Known at once: the event tail must publish it soon, or leave its member.
            health.recordCommitted(lastSeq, sentAt: sent)
            // Past a multiple of 100; or after every commit while this replica knows of no
            // snapshot in the last half of the kept events (its writes failed, or another
            // replica's went unseen), so the events it may not trim stay about 10,000.
            let behind = lastSeq - min(lastSeq, knownSnapshotSeq) > UInt64(Limits.retainedEvents / 2)
            if let state = batch.state, state.seq == lastSeq,
                behind || lastSeq / EtcdStore.snapshotInterval != batch.basis / EtcdStore.snapshotInterval
            {
                writeSnapshot(state)
            }
            return
        }
        let refusal = try commit.refusal(result)
        // What moved the store, read in the same round trip: its ids are learned, so the next
        // try checks them without another read.
        let read = ids.refused(
            generation: refusal.generation, idLog: refusal.idLog, through: refusal.newer.last?.seq)
        throw StateStoreError(
            "another replica committed first", code: .moved,
            remembered: try ids.requests(among: commit.checked, read: read), newerEvents: refusal.newer)
    }

    /// Hands `state` to the snapshot writer, apart from the commit that crossed a multiple of
    /// ``snapshotInterval``: the commit's replies do not wait for it (``SnapshotWriter``).
    private func writeSnapshot(_ state: CountriesState) {
        let writer =
            snapshotWriter
            ?? SnapshotWriter(
                configuration: configuration, identity: identity, health: health, logger: logger,
                spacing: snapshotSpacing)
        snapshotWriter = writer
        writer.submit(state)
    }

    /// Waits until the snapshot handed over last is written or given up, at most `limit` (for
    /// tests); whether it was.
    func waitForSnapshot(within limit: Duration) -> Bool {
        snapshotWriter?.waitUntilIdle(within: limit) ?? true
    }

    deinit { snapshotWriter?.stop() }

    /// `error`, recorded for `status` and logged once when etcd's database is full.
    private func noteNoSpace(_ error: StateStoreError) -> StateStoreError {
        EtcdStore.noteNoSpace(error, health: health, logger: logger)
        return error
    }

    /// Records `error` for `status` and logs it once, when etcd's database is full.
    static func noteNoSpace(_ error: StateStoreError, health: ClusterHealth, logger: Logger) {
        if error.code == .noSpace, health.recordNoSpace(error.message) {
            logger.log(.error, error.message)
        }
    }

    // MARK: Status

    /// The cluster's fields of `status`.
    public func clusterStatus(into status: inout ServiceStatus) {
        let cluster = health.cluster
        status.replica = configuration.replicaName
        status.etcdMembers = cluster.members
        status.etcdLeader = health.leaderShown()
        status.etcdQuorum = health.unavailability() ?? "yes"
        status.storeDamage = health.replaced ?? health.damage
        status.etcdSpace = health.noSpace
        status.publicationLagMilliseconds = UInt64(health.publicationLag() / .milliseconds(1))
    }

    /// A value kept in chunks (the seed, the snapshot), as a store error when it cannot be read.
    static func readBlob(_ blob: EtcdBlob, client: EtcdClient) throws(StateStoreError)
        -> (stored: EtcdBlob.Stored, revision: Int64)
    {
        do {
            return try blob.read(client: client)
        } catch {
            switch error {
            case .etcd(let failure): throw EtcdStore.storeError(failure, during: "read")
            case .incomplete(let why): throw StateStoreError("the store in etcd is damaged: \(why)")
            }
        }
    }

    /// Runs a read, turning etcd's error into the store's.
    static func read<T>(_ body: () throws(EtcdError) -> T) throws(StateStoreError) -> T {
        do {
            return try body()
        } catch {
            throw EtcdStore.storeError(error, during: "read")
        }
    }

    /// What an etcd failure means for the service: nothing written, no quorum, or unknown.
    static func storeError(_ error: EtcdError, during activity: String) -> StateStoreError {
        switch error.code {
        case .outcomeUnknown:
            return StateStoreError("etcd did not answer the \(activity): \(error)", code: .outcomeUnknown)
        case .noQuorum:
            return StateStoreError("the etcd cluster has no quorum: \(error)", code: .noQuorum)
        case .unreachable:
            return StateStoreError("no etcd member could be reached: \(error)", code: .noQuorum)
        case .rejected where error.message.contains("database space exceeded"):
            return StateStoreError(
                "etcd's database is full (alarm NOSPACE: \(error.message)), so it refused the \(activity): free space with `etcdctl compact` (up to a recent revision) and `etcdctl defrag` on each member, then `etcdctl alarm disarm`; or restart etcd with a larger --quota-backend-bytes",
                code: .noSpace)
        case .rejected, .compacted, .badResponse:
            return StateStoreError("etcd refused the \(activity): \(error)")
        }
    }
}
