import CountriesCore
import Foundation

/// What the socket loop must send, in order, after a batch is handled.
enum Outgoing: Equatable {
    /// A reply frame for the request with this envelope.
    case reply(envelope: [Data], body: Data)
    /// An event to publish (already committed), with its encoding (the bytes the store kept).
    case publish(Event, body: Data)
}

/// The service's brain without its sockets: decodes requests, runs them against the state,
/// commits changes in batches (group commit: requests that arrive together share one transaction
/// and one fsync), and says what to reply and publish.
///
/// The rule it keeps: nothing is replied or published before the store has committed it.
final class CommandHandler {
    /// The state as committed.
    private(set) var state: CountriesState
    /// Counters for `status`.
    private(set) var served = 0
    private(set) var refused = 0
    private var refusalLog = RefusalLog(window: .seconds(10), perWindow: 100)
    /// Connected subscribers, kept up to date by the socket loop.
    var subscribers = 0

    private let store: any StateStore
    private let seed: [Country]
    private let logger: Logger
    private let statusInfo: () -> StatusInfo

    /// What `status` reports beyond the state.
    struct StatusInfo {
        var version: String
        var uptimeSeconds: Double
        var endpoints: [String]
    }

    /// A change applied to the working state but not yet committed.
    private struct Pending {
        var envelope: [Data]
        var id: String?
        /// What the change asked (``Change/canonicalForm``), remembered beside `id`.
        var asked: Data?
        /// The change and its `if_store`, to run it again on a newer state (a shared store).
        var change: Change
        var ifStore: String?
        var reply: Reply
        /// `reply` encoded once, for the request-id memory and the wire alike.
        var body: Data
        var event: Event?
        /// Answered without a commit: the id was found remembered when a shared store refused
        /// the batch (the first reply, or a `conflict`).
        var settled: Data?

        init(
            envelope: [Data], id: String?, asked: Data?, change: Change, ifStore: String?, reply: Reply,
            event: Event?
        ) {
            self.envelope = envelope
            self.id = id
            self.asked = asked
            self.change = change
            self.ifStore = ifStore
            self.reply = reply
            self.body = reply.encoded()
            self.event = event
        }
    }

    /// How often a batch is run again on a newer state when a shared store keeps moving under
    /// it before it gives up with `storage_error`.
    static let maximumCommitAttempts = 8

    init(store: any StateStore, seed: [Country], logger: Logger, statusInfo: @escaping () -> StatusInfo)
        throws(StoreError)
    {
        self.store = store
        self.seed = store.storedSeed ?? seed
        self.logger = logger
        self.statusInfo = statusInfo
        self.state = try store.loadState()
    }

    /// The store for a log line: its path, or "in memory".
    var storeDescription: String { store.path == ":memory:" ? "in memory" : store.path }

    /// The store's identity, for every event, heartbeat and read reply.
    var storeIdentity: String { store.identity }

    /// Whether a batch of requests shares one commit (``StateStore/groupsCommits``).
    var groupsCommits: Bool { store.groupsCommits }

    /// Handles a batch of requests in arrival order and returns what to send.
    func handle(_ requests: some Collection<IncomingRequest>) -> [Outgoing] {
        var all: [Outgoing] = []
        handle(requests) { all += $0 }
        return all
    }

    /// Handles a batch of requests in arrival order, handing what to send to `emit` as soon as
    /// it is known: the replies of one commit go out before the next commit of the same batch
    /// starts (a batch of big changes on a shared store takes one commit each, and a reply held
    /// for the others' commits came seconds late).
    func handle(_ requests: some Collection<IncomingRequest>, emit: ([Outgoing]) -> Void) {
        var output: [Outgoing] = []
        var working = state
        var pending: [Pending] = []
        var synced = false
        var pendingEventBytes = 0

        func flush() {
            pendingEventBytes = 0
            if !pending.isEmpty {
                output += commit(pending, working: &working)
                pending.removeAll(keepingCapacity: true)
            }
            if !output.isEmpty {
                emit(output)
                output.removeAll(keepingCapacity: true)
            }
        }

        for incoming in requests {
            /// Answers this request now with a refusal, after the changes before it (arrival order).
            func refuseNow(_ error: CountriesError, op: String?) {
                flush()
                output.append(.reply(envelope: incoming.envelope, body: refuse(error, op: op).encoded()))
            }

            let request: Request
            do {
                request = try decode(incoming.body)
            } catch {
                refuseNow(error, op: nil)
                continue
            }

            switch request.command {
            case .change(let change):
                if incoming.access == .readOnly {
                    let refusal = CountriesError(
                        .forbidden, "this client's key may read and subscribe but not change the list")
                    output.append(
                        .reply(envelope: incoming.envelope, body: refuse(refusal, op: change.op).encoded()))
                    continue
                }
                if let why = store.unavailability {
                    refuseNow(
                        CountriesError(
                            .storageError, "\(why); nothing changed, retry later or on another replica"),
                        op: change.op)
                    continue
                }
                let asked = request.id.map { _ in change.canonicalForm }
                if let id = request.id, let asked {
                    // A retry of a change not committed yet: its reply is known only once the
                    // commit is done. If the commit fails, the retry runs as a new request.
                    if pending.contains(where: { $0.id == id }) { flush() }
                    // A shared store checks ids in the commit itself (one round trip, not one
                    // per id), and its answer is the only one another replica cannot race.
                    if !store.isShared {
                        switch remembered(id) {
                        case .request(let first) where first.request != nil && first.request != asked:
                            refuseNow(CountriesError(.conflict, reusedIDMessage(first)), op: change.op)
                            continue
                        case .request(let first):
                            flush()  // keep replies in arrival order
                            served += 1
                            output.append(.reply(envelope: incoming.envelope, body: first.reply))
                            continue
                        case .unknown:
                            // Without knowing whether it ran before, running it could apply it twice.
                            refuseNow(
                                CountriesError(
                                    .storageError,
                                    "the store could not be read to check this request id; nothing changed, retry later"
                                ), op: change.op)
                            continue
                        case .new:
                            break
                        }
                    }
                }
                pending.append(
                    stage(
                        change, id: request.id, asked: asked, ifStore: request.ifStore,
                        envelope: incoming.envelope,
                        on: &working))
                pendingEventBytes += pending.last?.event.map(CommandHandler.estimatedBytes) ?? 0
                if pending.count >= store.maximumChangesPerCommit
                    || pendingEventBytes >= store.maximumEventBytesPerCommit
                {
                    flush()
                }
            case .query(let query):
                flush()
                if let refusal = catchUpBeforeRead(&synced, working: &working) {
                    output.append(
                        .reply(envelope: incoming.envelope, body: refuse(refusal, op: nil).encoded()))
                    continue
                }
                output.append(
                    .reply(
                        envelope: incoming.envelope,
                        body: answer { () throws(CountriesError) in
                            var reply = try state.answer(query)
                            reply.store = store.identity
                            return reply
                        }.encoded()))
            case .history(let since):
                flush()
                if let refusal = catchUpBeforeRead(&synced, working: &working) {
                    output.append(
                        .reply(envelope: incoming.envelope, body: refuse(refusal, op: nil).encoded()))
                    continue
                }
                output.append(
                    .reply(
                        envelope: incoming.envelope,
                        body: answer { () throws(CountriesError) in try history(since: since) }.encoded()))
            case .status:
                flush()
                output.append(
                    .reply(
                        envelope: incoming.envelope,
                        body: answer { () throws(CountriesError) in status() }.encoded()))
            }
        }
        flush()
    }

    /// Runs `change` on `working` and returns it as pending (its refusal, when it is refused).
    private func stage(
        _ change: Change, id: String?, asked: Data?, ifStore: String?, envelope: [Data],
        on working: inout CountriesState
    ) -> Pending {
        if let ifStore, ifStore != store.identity {
            var refusal = refuse(
                CountriesError(
                    .conflict,
                    "this change is for store \(CountryName.quoted(ifStore)), but the service runs on store \(store.identity) (a different store: its seqs mean other changes); take a fresh list"
                ), op: change.op)
            // Names the store it runs on, so a client of several endpoints can tell an endpoint
            // of another store from a refusal of its change (docs/PROTOCOL.md, "Outcomes").
            refusal.store = store.identity
            return Pending(
                envelope: envelope, id: id, asked: asked, change: change, ifStore: ifStore, reply: refusal,
                event: nil)
        }
        do throws(CountriesError) {
            let result = try working.apply(change, seed: seed)
            var event = result.event
            event?.store = store.identity
            var reply = result.reply
            // A seq means something only within one store: the reply says which (v1.3).
            reply.store = store.identity
            return Pending(
                envelope: envelope, id: id, asked: asked, change: change, ifStore: ifStore, reply: reply,
                event: event)
        } catch {
            return Pending(
                envelope: envelope, id: id, asked: asked, change: change, ifStore: ifStore,
                reply: refuse(error, op: change.op), event: nil)
        }
    }

    /// The `conflict` message for an id first used for another change.
    private func reusedIDMessage(_ first: RememberedRequest) -> String {
        "this id was used for another request (\(describe(first))); use a new id for a new request"
    }

    /// Before the first read of a batch on a shared store: brings the state up to the store's
    /// latest, so no read answers older than a change another replica acknowledged before the
    /// read was sent. Returns the refusal when the store cannot say.
    private func catchUpBeforeRead(_ synced: inout Bool, working: inout CountriesState) -> CountriesError? {
        guard store.isShared, !synced else { return nil }
        // Known already: answer now rather than after a request that will time out.
        if let why = store.unavailability {
            return CountriesError(.storageError, "\(why); retry later or on another replica")
        }
        do {
            state = try store.catchUp(state)
            working = state
            synced = true
            return nil
        } catch {
            return CountriesError(
                .storageError,
                "this replica cannot tell whether it has the latest state (\(error.description)); retry later or on another replica"
            )
        }
    }

    /// An event from the store's log (a shared store), applied when it is the next one: the
    /// state follows changes other replicas made. Older ones are already in the state.
    func observe(_ event: Event) {
        guard event.seq == state.seq + 1 else { return }
        do {
            try state.replay(event)
        } catch {
            logger.log(
                .warning,
                "event \(event.seq) from the store does not apply to this replica's state (\(error)); the next read or change catches up"
            )
        }
    }

    private func decode(_ body: [Data]) throws(CountriesError) -> Request {
        guard body.count == 1, let frame = body.first else {
            throw CountriesError(
                .badRequest,
                body.isEmpty
                    ? "the request has no body frame; send one frame holding a JSON object"
                    : "the request has \(body.count) frames; send exactly one frame holding a JSON object")
        }
        return try Request.decode(frame)
    }

    private func answer(_ body: () throws(CountriesError) -> Reply) -> Reply {
        do {
            let reply = try body()
            served += 1
            return reply
        } catch {
            return refuse(error, op: nil)
        }
    }

    private func refuse(_ error: CountriesError, op: String?) -> Reply {
        refused += 1
        // A flood of bad requests must not become a flood of log lines.
        let line = "refused\(op.map { " \($0)" } ?? ""): \(error.code.rawValue): \(error.message)"
        if let line = refusalLog.record(line, now: .now) { logger.log(.warning, line) }
        return Reply(error: error)
    }

    /// What the store remembers of `id`. Only committed requests count: a change still pending
    /// in this batch may yet fail to commit (docs/RELIABILITY.md, section 1).
    private enum Memory {
        case request(RememberedRequest)
        case new
        case unknown
    }

    private func remembered(_ id: String) -> Memory {
        do {
            return try store.rememberedRequest(for: id).map(Memory.request) ?? .new
        } catch {
            logger.log(.error, "reading request id \(id) from the store failed: \(error)")
            return .unknown
        }
    }

    /// Commits the pending changes; on success the working state becomes the state, else it is
    /// thrown away and every pending request is told `storage_error` (nothing changed) or, when
    /// the store cannot say whether it committed, `unavailable`.
    ///
    /// A shared store may refuse the batch because another replica moved first: then the ids it
    /// found remembered get their first replies, the state catches up, and the rest run again
    /// on it (docs/HA.md, "Commits").
    private func commit(_ pending: [Pending], working: inout CountriesState) -> [Outgoing] {
        var pending = pending
        for _ in 0..<CommandHandler.maximumCommitAttempts {
            var batch = StoreBatch()
            batch.basis = state.seq
            batch.state = working
            for change in pending where change.settled == nil {
                if let event = change.event {
                    batch.events.append(event)
                    batch.encodedEvents.append(event.encoded())
                }
                if let id = change.id {
                    batch.requests.append(
                        RememberedRequest(id: id, request: change.asked, reply: change.body))
                }
            }
            do {
                // On a shared store even a batch of no-ops and refusals is committed (a compare of
                // the seq it was decided at, writing nothing): its outcomes were decided on this
                // replica's copy, which another replica's change may have made stale.
                if !batch.isEmpty || store.isShared { try store.commit(batch) }
            } catch  where error.code == .moved {
                if let failure = settleAndRestage(&pending, after: error, working: &working) {
                    return fail(pending, failure)
                }
                continue
            } catch {
                working = state
                logger.log(.error, "commit of \(pending.count) request(s) failed: \(error)")
                return fail(pending, error)
            }
            state = working
            return replies(to: pending, encodedEvents: batch.encodedEvents)
        }
        working = state
        return fail(
            pending,
            StateStoreError(
                "other replicas changed the list \(CommandHandler.maximumCommitAttempts) times while this batch was being committed"
            ))
    }

    /// After a shared store refused a batch: answers the requests whose ids it found
    /// remembered, catches up, and runs the others again on the newer state. Returns the error
    /// when the state cannot catch up.
    private func settleAndRestage(
        _ pending: inout [Pending], after refusal: StateStoreError, working: inout CountriesState
    ) -> StateStoreError? {
        let remembered = Dictionary(
            refusal.remembered.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        do {
            state = try caughtUp(with: refusal.newerEvents)
        } catch {
            working = state
            return error
        }
        working = state
        for index in pending.indices where pending[index].settled == nil {
            let change = pending[index]
            if let id = change.id, let first = remembered[id] {
                if let asked = first.request, asked != change.asked {
                    pending[index].settled =
                        refuse(CountriesError(.conflict, reusedIDMessage(first)), op: change.change.op)
                        .encoded()
                } else {
                    pending[index].settled = first.reply
                }
                continue
            }
            var restaged = stage(
                change.change, id: change.id, asked: change.asked, ifStore: change.ifStore,
                envelope: change.envelope, on: &working)
            restaged.settled = nil
            pending[index] = restaged
        }
        return nil
    }

    /// The state after the events a shared store sent with its refusal, when they follow on
    /// from it; else as the store says after a read of its own.
    private func caughtUp(with events: [Event]) throws(StateStoreError) -> CountriesState {
        var newer = state
        for event in events {
            guard event.seq == newer.seq + 1, (try? newer.replay(event)) != nil else {
                return try store.catchUp(state)
            }
        }
        // The events came with the refusal, at its revision: the store may have moved since,
        // but that only means the next try is refused again, never a wrong commit.
        return events.isEmpty ? try store.catchUp(state) : newer
    }

    /// Every pending request refused after a failed commit.
    private func fail(_ pending: [Pending], _ error: StateStoreError) -> [Outgoing] {
        let failure: CountriesError
        switch error.code {
        case .outcomeUnknown:
            failure = CountriesError(
                .unavailable,
                "the store did not say whether the change was committed (\(error.description)); it may or may not have been applied: retry with the same id"
            )
        case .noQuorum:
            failure = CountriesError(
                .storageError, "\(error.description); nothing changed, retry later or on another replica")
        case .failed, .moved:
            failure = CountriesError(
                .storageError,
                "the store could not commit (\(error.description)); nothing changed, retry later")
        }
        var output: [Outgoing] = []
        for change in pending {
            if let settled = change.settled {
                served += 1
                output.append(.reply(envelope: change.envelope, body: settled))
            } else {
                refused += 1
                output.append(.reply(envelope: change.envelope, body: Reply(error: failure).encoded()))
            }
        }
        return output
    }

    /// The replies of a committed batch, in arrival order, then its events (a shared store's
    /// events are published from its log instead, in seq order with every other replica's).
    private func replies(to pending: [Pending], encodedEvents: [Data]) -> [Outgoing] {
        var output: [Outgoing] = []
        for change in pending {
            if let settled = change.settled {
                served += 1
                output.append(.reply(envelope: change.envelope, body: settled))
                continue
            }
            if change.reply.ok { served += 1 }
            output.append(.reply(envelope: change.envelope, body: change.body))
        }
        guard !store.isShared else { return output }
        var encoded = encodedEvents.makeIterator()
        for change in pending where change.settled == nil {
            if let event = change.event {
                output.append(.publish(event, body: encoded.next() ?? event.encoded()))
            }
        }
        return output
    }

    /// The request an id was first used for, for a `conflict` message: its canonical JSON,
    /// cut short (it holds a client's name, which may be long).
    private func describe(_ first: RememberedRequest) -> String {
        let text = first.request.map { String(decoding: $0, as: UTF8.self) } ?? "?"
        return CountryName.quoted(text).dropFirst().dropLast().description
    }

    /// One page of the events after `since`: at most ``Limits/historyPageEvents``, and no more
    /// once ``Limits/historyPageBytes`` are reached (always at least one event), with `more`
    /// when it stops before the current seq. A whole history in one reply cost 400 KB per
    /// request at 5,000 events, which a peer that never reads could pile up by the thousand.
    private func history(since: UInt64) throws(CountriesError) -> Reply {
        let events: [Event]?
        do {
            events = try store.events(after: since, currentSeq: state.seq, limit: Limits.historyPageEvents)
        } catch {
            throw CountriesError(
                .storageError, "reading the history failed (\(error.description)); retry later")
        }
        guard let events else {
            let oldest = (try? store.oldestRetainedSeq(currentSeq: state.seq)) ?? state.seq
            if since > state.seq {
                throw CountriesError(
                    .historyTruncated,
                    "since \(since) is ahead of the current seq \(state.seq); take a fresh list")
            }
            throw CountriesError(
                .historyTruncated,
                "events after \(since) are no longer kept (the oldest is \(oldest)); take a fresh list")
        }
        var page: [Event] = []
        var bytes = 0
        for event in events {
            if !page.isEmpty && bytes + CommandHandler.estimatedBytes(of: event) > Limits.historyPageBytes {
                break
            }
            bytes += CommandHandler.estimatedBytes(of: event)
            page.append(event)
        }
        var reply = Reply(seq: state.seq, events: page)
        reply.store = store.identity
        if let last = page.last, last.seq < state.seq { reply.more = true }
        return reply
    }

    /// About the bytes `event` takes in a reply, without encoding it.
    static func estimatedBytes(of event: Event) -> Int {
        switch event.kind {
        case .changed(let row), .added(let row), .removed(let row):
            return 80 + row.name.utf8.count
        case .reset(let rows):
            return rows.reduce(48) { $0 + 40 + $1.name.utf8.count }
        }
    }

    private func status() -> Reply {
        let info = statusInfo()
        var reply = Reply(seq: state.seq, count: state.count)
        reply.store = store.identity
        var status = ServiceStatus()
        status.version = info.version
        status.uptimeMilliseconds = UInt64((max(0, info.uptimeSeconds) * 1000).rounded())
        status.visited = state.visitedCount
        status.commandsServed = served
        status.commandsRefused = refused
        status.storePath = store.path
        status.storeBytes = store.sizeOnDisk
        status.historyFrom = try? store.oldestRetainedSeq(currentSeq: state.seq)
        status.endpoints = info.endpoints
        status.subscribers = subscribers
        store.clusterStatus(into: &status)
        reply.status = status
        return reply
    }
}

@available(*, unavailable) extension CommandHandler: Sendable {}
