import CountriesCore
import CountriesStore
import Foundation
import Metrics
import SystemSupport

/// The service's brain without its sockets: decodes requests, runs them against the state,
/// commits changes in batches (group commit: requests that arrive together share one transaction
/// and one fsync), and says what to reply and publish.
///
/// The rule it keeps: nothing is replied or published before the store has committed it; a
/// store whose commit cannot fail (memory) has its replies sent before its bookkeeping, which
/// nothing can read in between (``CommitPath/repliesBeforeCommit``).
final class CommandHandler {
    /// The state as committed.
    private(set) var state: CountriesState
    /// Connected subscribers, kept up to date by the socket loop.
    var subscribers = 0
    /// Replies each peer has not read yet, when the socket loop counts them: what a peer may
    /// be answered is decided by ``ReplyAdmission`` within ``replyBounds``.
    var unreadReplies: UnreadReplies?
    var replyBounds = ReplyAdmission.Bounds.unbounded
    /// The `list` and `history` replies.
    private let reads: ReadAnswers

    // The store, the tally, `statusInfo` and `commits` are read by the status report too
    // (CommandHandler+Status.swift), so they are internal, not private.
    let store: any StateStore
    private let stager: BatchStager
    let path: any CommitPath
    /// Counts and logs every answer.
    let tally: AnswerTally
    /// What the service says of itself (version, uptime, endpoints), asked at each report.
    let statusInfo: () -> StatusInfo

    /// A replica's `writer` in `status`: what the writer election says now (nil: not replicated).
    var writerStatus: (() -> String)?

    /// What `status` reports beyond the state.
    struct StatusInfo {
        var version: String
        var uptimeSeconds: Double
        var endpoints: [String]
    }

    /// Commit latencies and sizes, kept when the metrics are on (nil: not measured).
    private(set) var commits: (seconds: Histogram, changes: Histogram)?
    /// Whether `commits` is kept: asking `commits == nil` on every commit copied both
    /// histograms (about 500 instructions per toggle).
    private var measuresCommits = false

    /// Whether answers are counted by op and code and commits measured, for the metrics.
    var measures: Bool {
        get { measuresCommits }
        set {
            tally.countsRequests = newValue
            measuresCommits = newValue
            commits =
                newValue
                ? (
                    Histogram(upperBounds: ServiceMetrics.secondsBuckets),
                    Histogram(upperBounds: ServiceMetrics.changesBuckets)
                ) : nil
        }
    }

    /// Whether requests need a ``RequestTrace`` (a debug log or the metrics read it).
    var traces: Bool { tally.traces }

    /// Requests answered as they asked, for `status`.
    var served: Int { tally.served }
    /// Requests refused, for `status`.
    var refused: Int { tally.refused }

    init(store: any StateStore, seed: [Country], logger: Logger, statusInfo: @escaping () -> StatusInfo)
        throws(StoreOpenError)
    {
        self.store = store
        let stager = BatchStager(identity: store.identity, seed: store.storedSeed ?? seed)
        let tally = AnswerTally(logger: logger)
        self.stager = stager
        self.tally = tally
        reads = ReadAnswers(store: store)
        path =
            store.isShared
            ? SharedCommitPath(store: store, stager: stager, tally: tally, logger: logger)
            : LocalCommitPath(store: store, tally: tally, logger: logger)
        self.logger = logger
        self.statusInfo = statusInfo
        self.state = try store.loadState()
    }

    private let logger: Logger

    /// The store for a log line: its path, or "in memory".
    var storeDescription: String { store.path == ":memory:" ? "in memory" : store.path }

    /// The store's identity, for every event, heartbeat and read reply.
    var storeIdentity: String { store.identity }
    /// The list `reset` goes back to: the store's own (a shared store), else the service's.
    var resetSeed: [Country] { stager.seed }

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
    ///
    /// Outcomes are decided by the ``BatchStager``; whether they stand, by the ``CommitPath``
    /// of the store's kind.
    func handle(_ requests: some Collection<IncomingRequest>, emit: ([Outgoing]) -> Void) {
        // The arrays of the last batch, emptied, so that a batch does not make two new ones
        // (the in-memory path handles each request as a batch of its own).
        var output: [Outgoing] = []
        var staged: [StagedChange] = []
        swap(&output, &spareOutput)
        swap(&staged, &spareStaged)
        var working = path.workingCopy(of: state)
        defer {
            path.batchEnded(with: working)
            keepSpares(&output, &staged)
        }
        var readsPrepared = false
        var stagedEventBytes = 0
        // Finds a staged change's id (by hash past a few).
        var stagedIDs = BatchIDTable<Void>()
        var heldReads: [HeldRead] = []

        /// Sends what is made so far, committing nothing.
        func send() {
            if !output.isEmpty {
                emit(output)
                output.removeEach(keepingCapacity: true)
            }
        }

        // Why the batch's reads cannot be answered, once the commit path said so: asked again
        // for each read, a catch-up that fails (up to 30 ms) held the loop once per read.
        var readRefusal: CountriesError?

        /// The commit path's say before the batch's first read of the list: nil when reads may
        /// be answered, else the refusal each of them gets.
        func prepareReads() -> CountriesError? {
            guard !readsPrepared else { return nil }
            if let readRefusal { return readRefusal }
            if let refusal = path.prepareRead(&state) {
                readRefusal = refusal
                return refusal
            }
            if path.readsMayCatchUp { working = state }
            readsPrepared = true
            return nil
        }

        /// Answers `read` now, from the state as it is.
        func answer(_ read: HeldRead.Kind, envelope: [Data], trace: RequestTrace) {
            if read.needsPreparing, let refusal = prepareReads() {
                output.append(
                    .reply(envelope: envelope, body: tally.refuse(refusal, trace).encoded(as: [UInt8].self)))
                return
            }
            output.append(.reply(envelope: envelope, body: reply(to: read, trace: trace)))
        }

        /// Commits what is staged, answers the reads held for that commit, and sends.
        func flush() {
            stagedEventBytes = 0
            if !staged.isEmpty {
                if path.repliesBeforeCommit {
                    // The client's wait ends here; the store's bookkeeping comes after.
                    path.appendReplies(to: staged, into: &output)
                    send()
                }
                // Measured when it writes an event: a batch of refusals commits nothing.
                let started = measuresCommits ? ContinuousClock.now : nil
                path.commit(staged, state: &state, working: &working, into: &output)
                if let started {
                    let changes = staged.reduce(0) { $0 + ($1.event == nil ? 0 : 1) }
                    if changes > 0 {
                        commits?.seconds.observe(
                            Double((ContinuousClock.now - started) / .nanoseconds(1)) / 1e9)
                        commits?.changes.observe(Double(changes))
                    }
                }
                staged.removeEach(keepingCapacity: true)
                stagedIDs.removeAll()
                // Every request of the batch came before this commit: when its compare held,
                // the state is the store's latest for all of them.
                if path.lastCommitConfirmedState { readsPrepared = true }
            }
            if !heldReads.isEmpty {
                for read in heldReads {
                    answer(read.kind, envelope: read.envelope, trace: read.trace)
                }
                heldReads.removeAll(keepingCapacity: true)
            }
            send()
        }

        for incoming in requests {
            var trace = incoming.trace
            /// Answers this request now with a refusal, after the changes before it (arrival
            /// order).
            func refuseNow(_ error: CountriesError) {
                flush()
                output.append(
                    .reply(
                        envelope: incoming.envelope,
                        body: tally.refuse(error, trace, seq: state.seq).encoded(as: [UInt8].self)))
            }

            // A peer's replies keep the order of its requests (a DEALER may send several).
            if !heldReads.isEmpty {
                let peer = UnreadReplies.peer(of: incoming.envelope)
                if heldReads.contains(where: { UnreadReplies.peer(of: $0.envelope) == peer }) { flush() }
            }

            if let unreadReplies {
                // The replies made before it count too: send them, but never commit early for
                // this (that would end group commit); staged changes' replies are small.
                if staged.isEmpty { send() }
                switch unreadReplies.admission(
                    of: UnreadReplies.peer(of: incoming.envelope), likely: { incoming.likelyReply },
                    within: replyBounds)
                {
                case .answer:
                    break
                case .refuse(let refusal):
                    refuseNow(refusal)
                    continue
                case .drop(let reason):
                    tally.drop(trace, reason: reason)
                    continue
                }
            }

            /// Answers `read` now, or holds it for the next commit when answering now would
            /// take a commit (changes are staged before it) or, on a shared store, a read of
            /// the store (``HeldRead``).
            func hold(_ read: HeldRead.Kind) {
                if !staged.isEmpty || (read.needsPreparing && !readsPrepared && path.readsMayCatchUp) {
                    heldReads.append(HeldRead(kind: read, envelope: incoming.envelope, trace: trace))
                } else {
                    answer(read, envelope: incoming.envelope, trace: trace)
                }
            }

            let request: Request
            do {
                request = try decode(incoming.body)
            } catch {
                refuseNow(error)
                continue
            }
            if tally.traces { trace = trace.naming(request) }

            switch request.command {
            case .change(let change):
                if incoming.access == .readOnly {
                    let refusal = CountriesError(
                        .forbidden, "this client's key may read and subscribe but not change the list")
                    output.append(
                        .reply(
                            envelope: incoming.envelope,
                            body: tally.refuse(refusal, trace, seq: state.seq).encoded(as: [UInt8].self))
                    )
                    continue
                }
                if let why = store.unavailability {
                    refuseNow(
                        CountriesError(
                            .storageError, "\(why); nothing changed, retry later or on another replica"))
                    continue
                }
                if let id = request.id {
                    // A retry of a change not committed yet: its reply is known only once the
                    // commit is done. If the commit fails, the retry runs as a new request.
                    if stagedIDs.find(id, among: staged.count, entry: { (staged[$0].id, ()) }) != nil {
                        flush()
                    }
                    switch path.earlyAnswer(forID: id, asking: { change.canonicalForm }) {
                    case .reply(let first)?:
                        flush()  // keep replies in arrival order
                        tally.countReplay(trace, reply: first)
                        output.append(.reply(envelope: incoming.envelope, body: first))
                        continue
                    case .refusal(let refusal)?:
                        refuseNow(refusal)
                        continue
                    case nil:
                        break
                    }
                }
                // Made in place and read by index: a staged change in a local, appended after,
                // was copied whole (a dozen reference counts), and so was `staged.last`.
                staged.append(
                    stager.stage(
                        change, id: request.id, ifStore: request.ifStore,
                        envelope: incoming.envelope, on: &working))
                let last = staged.count - 1
                staged[last].trace = trace
                stagedEventBytes += staged[last].event?.estimatedBytes ?? 0
                if staged.count >= store.maximumChangesPerCommit
                    || stagedEventBytes >= store.maximumEventBytesPerCommit
                {
                    flush()
                }
            case .query(let query):
                hold(.query(query))
            case .history(let since):
                hold(.history(since: since))
            case .status:
                hold(.status)
            }
        }
        flush()
    }

    /// Empty arrays with room for a batch, kept between batches.
    private var spareOutput: [Outgoing] = []
    private var spareStaged: [StagedChange] = []

    /// Keeps a batch's arrays for the next one, emptied; not those a large batch grew (a
    /// thousand staged changes would be held for good).
    private func keepSpares(_ output: inout [Outgoing], _ staged: inout [StagedChange]) {
        let largest = 64
        output.removeEach(keepingCapacity: output.capacity <= largest)
        staged.removeEach(keepingCapacity: staged.capacity <= largest)
        swap(&output, &spareOutput)
        swap(&staged, &spareStaged)
    }

    /// A guess at the `list` reply's bytes now (exact once it was encoded at this seq).
    var estimatedListBytes: Int { reads.estimatedListBytes(of: state) }

    /// An event from the store's log (a shared store), applied when it is the next one: the
    /// state follows changes other replicas made. Older ones are already in the state.
    ///
    /// Returns why the event does not apply to the state just before it, or nil: it applied,
    /// or the state is not just before it (behind, it catches up on the next read or change).
    @discardableResult
    func observe(_ event: Event) -> String? {
        guard event.seq == state.seq + 1 else { return nil }
        do {
            try state.replay(event)
            return nil
        } catch {
            return "\(error)"
        }
    }

    private func decode(_ body: [[UInt8]]) throws(CountriesError) -> Request {
        guard body.count == 1, let frame = body.first else {
            throw CountriesError(
                .badRequest,
                body.isEmpty
                    ? "the request has no body frame; send one frame holding a JSON object"
                    : "the request has \(body.count) frames; send exactly one frame holding a JSON object")
        }
        return try Request.decode(frame)
    }

    private func answer(_ trace: RequestTrace, _ body: () throws(CountriesError) -> Reply) -> Reply {
        do {
            let reply = try body()
            tally.countServed(trace, seq: reply.seq ?? state.seq)
            return reply
        } catch {
            return tally.refuse(error, trace, seq: state.seq)
        }
    }

    /// The reply to `read` from the state as it is now, counted.
    private func reply(to read: HeldRead.Kind, trace: RequestTrace) -> [UInt8] {
        switch read {
        case .query(.list):
            tally.countServed(trace, seq: state.seq)
            return reads.list(of: state)
        case .query(let query):
            return answer(trace) { () throws(CountriesError) in
                var reply = try state.answer(query)
                reply.store = store.identity
                return reply
            }.encoded(as: [UInt8].self)
        case .history(let since):
            return answer(trace) { () throws(CountriesError) in
                try reads.history(since: since, of: state)
            }.encoded(as: [UInt8].self)
        case .status:
            return answer(trace) { () throws(CountriesError) in status() }.encoded(as: [UInt8].self)
        }
    }
}

@available(*, unavailable) extension CommandHandler: Sendable {}
