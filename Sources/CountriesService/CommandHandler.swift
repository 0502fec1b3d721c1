import CountriesCore
import Foundation

/// What the socket loop must send, in order, after a batch is handled.
enum Outgoing: Equatable {
    /// A reply frame for the request with this envelope.
    case reply(envelope: [Data], body: Data)
    /// An event to publish (already committed).
    case publish(Event)
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
        var reply: Reply
        /// `reply` encoded once, for the request-id memory and the wire alike.
        var body: Data
        var event: Event?

        init(envelope: [Data], id: String?, asked: Data?, reply: Reply, event: Event?) {
            self.envelope = envelope
            self.id = id
            self.asked = asked
            self.reply = reply
            self.body = reply.encoded()
            self.event = event
        }
    }

    init(store: any StateStore, seed: [Country], logger: Logger, statusInfo: @escaping () -> StatusInfo)
        throws(StoreError)
    {
        self.store = store
        self.seed = seed
        self.logger = logger
        self.statusInfo = statusInfo
        self.state = try store.loadState()
    }

    /// The store for a log line: its path, or "in memory".
    var storeDescription: String { store.path == ":memory:" ? "in memory" : store.path }

    /// The store's identity, for every event, heartbeat and read reply.
    var storeIdentity: String { store.identity }

    /// Handles a batch of requests in arrival order and returns what to send.
    func handle(_ requests: [IncomingRequest]) -> [Outgoing] {
        var output: [Outgoing] = []
        var working = state
        var pending: [Pending] = []

        func flush() {
            guard !pending.isEmpty else { return }
            output += commit(pending, working: &working)
            pending.removeAll(keepingCapacity: true)
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
                let asked = request.id.map { _ in change.canonicalForm }
                if let id = request.id, let asked {
                    // A retry of a change not committed yet: its reply is known only once the
                    // commit is done. If the commit fails, the retry runs as a new request.
                    if pending.contains(where: { $0.id == id }) { flush() }
                    switch remembered(id) {
                    case .request(let first) where first.request != nil && first.request != asked:
                        // Another change under a known id (ids from schema 1 have no request).
                        refuseNow(
                            CountriesError(
                                .conflict,
                                "this id was used for another request (\(describe(first))); use a new id for a new request"
                            ), op: change.op)
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
                do throws(CountriesError) {
                    if let ifStore = request.ifStore, ifStore != store.identity {
                        throw CountriesError(
                            .conflict,
                            "this change is for store \(CountryName.quoted(ifStore)), but the service runs on store \(store.identity) (a different store: its seqs mean other changes); take a fresh list"
                        )
                    }
                    let result = try working.apply(change, seed: seed)
                    var event = result.event
                    event?.store = store.identity
                    pending.append(
                        Pending(
                            envelope: incoming.envelope, id: request.id, asked: asked, reply: result.reply,
                            event: event))
                } catch {
                    pending.append(
                        Pending(
                            envelope: incoming.envelope, id: request.id, asked: asked,
                            reply: refuse(error, op: change.op), event: nil))
                }
            case .query(let query):
                flush()
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
        return output
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
    /// thrown away and every pending request is told `storage_error`.
    private func commit(_ pending: [Pending], working: inout CountriesState) -> [Outgoing] {
        var batch = StoreBatch()
        for change in pending {
            if let event = change.event { batch.events.append(event) }
            if let id = change.id {
                batch.requests.append(RememberedRequest(id: id, request: change.asked, reply: change.body))
            }
        }
        do {
            try store.commit(batch)
        } catch {
            working = state
            logger.log(.error, "commit of \(pending.count) request(s) failed, nothing changed: \(error)")
            let failure = CountriesError(
                .storageError,
                "the store could not commit (\(error.description)); nothing changed, retry later")
            refused += pending.count
            return pending.map { .reply(envelope: $0.envelope, body: Reply(error: failure).encoded()) }
        }
        state = working
        var output: [Outgoing] = []
        for change in pending {
            if change.reply.ok { served += 1 }
            output.append(.reply(envelope: change.envelope, body: change.body))
        }
        for change in pending {
            if let event = change.event { output.append(.publish(event)) }
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
        reply.status = status
        return reply
    }
}

@available(*, unavailable) extension CommandHandler: Sendable {}
