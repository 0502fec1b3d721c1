import CountriesCore
import CountriesSockets
import CountriesStore
import Foundation
import SystemSupport

/// The commit path of a store this process owns alone (SQLite, memory): nobody else writes it,
/// so the state in memory is the store's, an id is looked up before its change is staged, and
/// a batch's events are published once it is committed (docs/RELIABILITY.md, section 1).
final class LocalCommitPath: CommitPath {
    let tally: AnswerTally
    private let store: any StateStore
    private let logger: Logger
    /// The committed state in storage of its own, between batches: each commit follows it
    /// through its events (``CountriesState/follow(_:through:)``) instead of the next batch
    /// copying the whole list on its first change, which made a toggle on a 10,000-row list
    /// cost about 1,000,000 instructions instead of 70,000 (docs/BENCHMARKS.md, "Stop 31").
    private var spare: CountriesState?
    /// The last batch's arrays, emptied: the in-memory store commits each request as a batch of
    /// its own, and three new arrays a toggle were three allocations and frees.
    private var spareBatch = StoreBatch()
    /// ``StateStore/requestIDsForgottenYoung`` as last seen, and the warning's rate limit.
    private var forgottenYoung = 0
    private var forgottenYoungLog = RefusalLog(noun: "warnings of young request ids forgotten")
    private(set) var failures = CommitFailures()

    init(store: any StateStore, tally: AnswerTally, logger: Logger) {
        self.store = store
        repliesBeforeCommit = store.commitCannotFail
        self.tally = tally
        self.logger = logger
    }

    /// Asked once: the handler reads it for every batch.
    let repliesBeforeCommit: Bool

    /// Only committed requests count: a change still staged in this batch may yet fail.
    func earlyAnswer(forID id: String, asking asked: () -> [UInt8]?) -> EarlyAnswer? {
        do {
            guard let first = try store.rememberedRequest(for: id) else { return nil }
            switch first.answer(toChangeAsking: asked()) {
            case .success(let reply): return .reply(reply)
            case .failure(let refusal): return .refusal(refusal)
            }
        } catch {
            logger.log(.error, "reading request id \(id) from the store failed: \(error)")
            // Without knowing whether it ran before, running it could apply it twice.
            return .refusal(
                CountriesError(
                    .storageError,
                    "the store could not be read to check this request id; nothing changed, retry later"))
        }
    }

    /// The state in memory is the store's: nothing to catch up.
    func prepareRead(_ state: inout CountriesState) -> CountriesError? { nil }

    var readsMayCatchUp: Bool { false }

    /// Only this process writes the store: its state is the latest, committed or not.
    var lastCommitConfirmedState: Bool { true }

    /// Only this path's commits change the state, and each leaves the spare equal to it; the
    /// seq is checked all the same, and anything else gets `state` (a copy on first change).
    func workingCopy(of state: CountriesState) -> CountriesState {
        guard let spare = spare.take(), spare.seq == state.seq, spare.count == state.count else {
            return state
        }
        return spare
    }

    func batchEnded(with working: CountriesState) {
        spare = working
    }

    func commit(
        _ staged: [StagedChange], state: inout CountriesState, working: inout CountriesState,
        into output: inout [Outgoing]
    ) {
        var batch = StoreBatch()
        swap(&batch, &spareBatch)
        defer {
            batch.removeAll(keepingCapacityUpTo: 64)
            swap(&batch, &spareBatch)
        }
        batch.fill(staged, basis: state.seq, state: working)
        do {
            if !batch.isEmpty {
                try store.commit(batch)
                failures.succeeded()
            }
        } catch {
            working = state
            if let line = failures.failed(
                "commit of \(staged.count) request(s) failed: \(error)", reason: "\(error)", now: .now)
            {
                logger.log(.error, line)
            }
            // A store whose commit cannot fail had its replies sent already.
            if !repliesBeforeCommit { output += failed(staged, error) }
            return
        }
        let young = store.requestIDsForgottenYoung
        if young != forgottenYoung { warnOfYoungIDsForgotten(young) }
        // `state` takes the committed value, and `working` (the old storage) follows it.
        swap(&state, &working)
        working.follow(state, through: batch.events)
        if !repliesBeforeCommit { appendReplies(to: staged, into: &output) }
        // What is published is what was committed: the batch's events with their own
        // encodings, so no event can go out with another's bytes. By index: an iterator over
        // the encodings would share the array the spare batch keeps.
        for index in batch.events.indices {
            let event = batch.events[index]
            output.append(.publish(topic: event.topic, seq: event.seq, body: batch.encodedEvent(index)))
        }
    }

    /// Exactly once is weakened: a burst of changes made the store forget ids younger than the
    /// age floor. Operators see it here and in `countries_request_ids_forgotten_young_total`.
    private func warnOfYoungIDsForgotten(_ young: Int) {
        let line =
            "forgot \(young - forgottenYoung) request id(s) younger than \(Limits.requestIDMinimumAge.components.seconds / 60) minutes (\(young) since start): a burst of changes filled the ids' memory (\(Limits.maximumRequestIDs) ids or \(Limits.maximumRequestIDBytesKept >> 20) MiB of ids, requests and replies); a retry of one of them would be applied again"
        forgottenYoung = young
        if let line = forgottenYoungLog.record(line, now: .now) { logger.log(.warning, line) }
    }
}

@available(*, unavailable) extension LocalCommitPath: Sendable {}
