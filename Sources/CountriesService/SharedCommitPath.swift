import CountriesCore
import CountriesStore
import Foundation
import SystemSupport

/// The commit path of a store replicas share (etcd): another replica may have moved it, so
/// every outcome stands only once the store confirmed the state it was decided on. A batch is
/// committed as a compare of the seq it was staged at (even a batch of no-ops and refusals,
/// which writes nothing), its ids are checked in that same transaction, and a refusal because
/// the store moved means: settle the ids found remembered, catch up, decide the rest again.
/// Events are published from the store's log, in seq order with every other replica's
/// (docs/HA.md, "Commits"; docs/PROTOCOL.md, "Outcomes").
final class SharedCommitPath: CommitPath {
    let tally: AnswerTally
    private let store: any StateStore
    private let stager: BatchStager
    private let logger: Logger
    private(set) var failures = CommitFailures()

    /// How often a batch is run again on a newer state when the store keeps moving under it
    /// before it gives up with `storage_error`.
    static let maximumCommitAttempts = 8

    init(store: any StateStore, stager: BatchStager, tally: AnswerTally, logger: Logger) {
        self.store = store
        self.stager = stager
        self.tally = tally
        self.logger = logger
    }

    /// The commit checks ids itself (one round trip, not one per id), and its answer is the
    /// only one another replica cannot race.
    func earlyAnswer(forID id: String, asking asked: () -> [UInt8]?) -> EarlyAnswer? { nil }

    /// Whether the last commit wrote a change and its compare held: etcd applied it in its
    /// log's order, so at that moment the store held exactly the state it left. A batch that
    /// wrote nothing is a transaction of reads, which etcd 3.4 was seen to answer from behind
    /// (docs/BENCHMARKS.md, "Stop 28"): reads after it catch up as before.
    private(set) var lastCommitConfirmedState = false

    /// No read answers older than a change another replica acknowledged before it was sent.
    func prepareRead(_ state: inout CountriesState) -> CountriesError? {
        // Known already: answer now rather than after a request that will time out.
        if let why = store.unavailability {
            return CountriesError(.storageError, "\(why); retry later or on another replica")
        }
        do {
            state = try store.catchUp(state)
            return nil
        } catch {
            return CountriesError(
                .storageError,
                "this replica cannot tell whether it has the latest state (\(error.description)); retry later or on another replica"
            )
        }
    }

    func commit(
        _ staged: [StagedChange], state: inout CountriesState, working: inout CountriesState,
        into output: inout [Outgoing]
    ) {
        output += committing(staged, state: &state, working: &working)
    }

    /// Commits `staged` as ``commit(_:state:working:into:)`` does, returning what to send.
    private func committing(
        _ staged: [StagedChange], state: inout CountriesState, working: inout CountriesState
    ) -> [Outgoing] {
        var staged = staged
        lastCommitConfirmedState = false
        for _ in 0..<Self.maximumCommitAttempts {
            do {
                // Even a batch of no-ops and refusals: its outcomes were decided on this
                // replica's copy, which another replica's change may have made stale.
                try store.commit(StoreBatch(staged, basis: state.seq, state: working))
            } catch  where error.code == .tooLarge {
                return split(staged, tooLarge: error, state: &state, working: &working)
            } catch  where error.code == .moved {
                if let failure = settleAndRestage(&staged, after: error, state: &state, working: &working) {
                    return failed(staged, failure)
                }
                continue
            } catch {
                working = state
                let line = failures.failed(
                    "commit of \(staged.count) request(s) failed: \(error)", reason: "\(error)", now: .now)
                // A full etcd is logged once, by the store, not once per batch.
                if let line, error.code != .noSpace { logger.log(.error, line) }
                return failed(staged, error)
            }
            failures.succeeded()
            state = working
            lastCommitConfirmedState = staged.contains { $0.event != nil }
            return replies(to: staged)
        }
        working = state
        return failed(
            staged,
            StateStoreError(
                "other replicas changed the list \(Self.maximumCommitAttempts) times while this batch was being committed"
            ))
    }

    /// A batch over the store's transaction budget: committed as two halves, each staged again
    /// on the state the one before left, down to one change, which alone is refused
    /// `too_large` (saying by how much), and nothing else with it.
    private func split(
        _ staged: [StagedChange], tooLarge: StateStoreError, state: inout CountriesState,
        working: inout CountriesState
    ) -> [Outgoing] {
        working = state
        let open = staged.indices.filter { staged[$0].settled == nil }
        guard open.count > 1 else {
            logger.log(.warning, "a change was refused: \(tooLarge)")
            return failed(staged, tooLarge)
        }
        let middle = open[open.count / 2]
        var replies: [Outgoing] = []
        for part in [Array(staged[..<middle]), Array(staged[middle...])] {
            working = state
            let restaged = part.map { change in
                change.settled != nil
                    ? change
                    : stager.stage(
                        change.change, id: change.id, ifStore: change.ifStore,
                        envelope: change.envelope, on: &working)
            }
            replies += committing(restaged, state: &state, working: &working)
        }
        return replies
    }

    /// After the store refused a batch: answers the requests whose ids it found remembered,
    /// catches up, and runs the others again on the newer state. Returns the error when the
    /// state cannot catch up.
    private func settleAndRestage(
        _ staged: inout [StagedChange], after refusal: StateStoreError, state: inout CountriesState,
        working: inout CountriesState
    ) -> StateStoreError? {
        let remembered = Dictionary(
            refusal.remembered.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        do {
            state = try caughtUp(state, with: refusal.newerEvents)
        } catch {
            working = state
            return error
        }
        working = state
        for index in staged.indices where staged[index].settled == nil {
            let change = staged[index]
            if let id = change.id, let first = remembered[id] {
                switch first.answer(toChangeAsking: change.change.canonicalForm) {
                case .success(let reply): staged[index].settled = reply
                case .failure(let conflict):
                    staged[index].settled = Reply(error: conflict).encoded(as: [UInt8].self)
                }
                continue
            }
            staged[index] = stager.stage(
                change.change, id: change.id, ifStore: change.ifStore,
                envelope: change.envelope, on: &working)
        }
        return nil
    }

    /// The state after the events the store sent with its refusal, when they follow on from
    /// it; else as the store says after a read of its own.
    private func caughtUp(_ state: CountriesState, with events: [Event]) throws(StateStoreError)
        -> CountriesState
    {
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
}

@available(*, unavailable) extension SharedCommitPath: Sendable {}
