import CountriesCore
import CountriesStore
import Foundation
import SystemSupport

/// How staged changes become committed, one kind per kind of store (docs/HA.md, "Commits"):
/// ``LocalCommitPath`` for a store this process owns alone, ``SharedCommitPath`` for one that
/// replicas share. Each promise of a kind is kept in its path, and nowhere else.
protocol CommitPath: AnyObject {
    /// Counts and logs what goes out.
    var tally: AnswerTally { get }

    /// The commits that failed lately: the log's share of them, and readiness.
    var failures: CommitFailures { get }

    /// Before a change with an id is staged: what the store already says of the id (its first
    /// reply, or a refusal), or nil to stage it (the id is new, or the commit checks it).
    /// `asked` makes the change's canonical form, asked only of an id found remembered.
    func earlyAnswer(forID id: String, asking asked: () -> [UInt8]?) -> EarlyAnswer?

    /// Before the first read of a batch: brings `state` up to what the store holds, or says
    /// why it cannot.
    func prepareRead(_ state: inout CountriesState) -> CountriesError?

    /// Commits `staged`, run on `working` from `state`. On success `state` becomes `working`,
    /// else `working` goes back to `state`. Appends what to send to `output`, replies in arrival
    /// order (into the caller's array: a new one per batch was made, filled, copied and freed).
    func commit(
        _ staged: [StagedChange], state: inout CountriesState, working: inout CountriesState,
        into output: inout [Outgoing])

    /// The state a batch stages its changes on, equal to `state`: `state` itself, or a copy in
    /// storage of its own that the path keeps in step (``LocalCommitPath``), so that the
    /// batch's first change does not copy the whole list.
    func workingCopy(of state: CountriesState) -> CountriesState

    /// The batch's working state when the batch is done (equal to the committed state then).
    func batchEnded(with working: CountriesState)

    /// Whether a batch's replies go out before ``commit(_:state:working:into:)``, which then
    /// appends only the events: for a store whose commit cannot fail
    /// (``CountriesStore/StateStore/commitCannotFail``), so the reply waits for none of its
    /// bookkeeping (the event's encoding, the id's memory).
    var repliesBeforeCommit: Bool { get }

    /// Whether ``prepareRead(_:)`` may change the state (a catch-up), so that the working state
    /// must be taken from it again after.
    var readsMayCatchUp: Bool { get }

    /// Whether the last ``commit(_:state:working:into:)`` showed `state` to be the store's
    /// latest, so that the requests that came before it may be answered from it without
    /// ``prepareRead(_:)`` (``HeldRead``).
    var lastCommitConfirmedState: Bool { get }
}

extension CommitPath {
    func workingCopy(of state: CountriesState) -> CountriesState { state }
    func batchEnded(with working: CountriesState) {}
    var readsMayCatchUp: Bool { true }
    var repliesBeforeCommit: Bool { false }
}

/// What a store already says of a change's id.
enum EarlyAnswer {
    /// The first reply to it, byte for byte.
    case reply([UInt8])
    /// A refusal: the id was used for another change, or cannot be checked now.
    case refusal(CountriesError)
}

extension CommitPath {
    /// The replies to a committed batch, in arrival order (each counted as it goes out).
    func replies(to staged: [StagedChange]) -> [Outgoing] {
        var output: [Outgoing] = []
        output.reserveCapacity(staged.count + staged.count)  // room for the events after them
        appendReplies(to: staged, into: &output)
        return output
    }

    /// Appends the replies to a committed batch to `output`, in arrival order.
    func appendReplies(to staged: [StagedChange], into output: inout [Outgoing]) {
        // By index, reading only the fields needed: a closure or a `for-in` over the changes
        // copied each whole `StagedChange` (a dozen references retained and released).
        for index in staged.indices {
            if let settled = staged[index].settled {
                tally.countReplay(staged[index].trace, reply: settled)
                output.append(.reply(envelope: staged[index].envelope, body: settled))
                continue
            }
            tally.count(staged[index].outcome, staged[index].trace)
            output.append(.reply(envelope: staged[index].envelope, body: staged[index].body))
        }
    }

    /// Every staged request answered after a failed commit: `storage_error` (nothing changed)
    /// or, when the store cannot say whether it committed, `unavailable`.
    func failed(_ staged: [StagedChange], _ error: StateStoreError) -> [Outgoing] {
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
        case .noSpace:
            failure = CountriesError(.storageError, "nothing changed: \(error.description)")
        case .tooLarge:
            failure = CountriesError(.tooLarge, error.description)
        case .failed, .moved:
            failure = CountriesError(
                .storageError,
                "the store could not commit (\(error.description)); nothing changed, retry later")
        }
        return staged.map { change in
            if let settled = change.settled {
                tally.countReplay(change.trace, reply: settled)
                return .reply(envelope: change.envelope, body: settled)
            }
            return .reply(
                envelope: change.envelope, body: tally.refuse(failure, change.trace).encoded(as: [UInt8].self)
            )
        }
    }
}

extension StoreBatch {
    /// The batch that commits `staged` (those not settled yet) on top of seq `basis`.
    init(_ staged: [StagedChange], basis: UInt64, state: CountriesState) {
        self.init()
        fill(staged, basis: basis, state: state)
    }

    /// Makes this empty batch the one that commits `staged` on top of seq `basis`.
    mutating func fill(_ staged: [StagedChange], basis: UInt64, state: CountriesState) {
        self.basis = basis
        self.state = state
        // By index, for the same reason as in ``CommitPath/appendReplies(to:into:)``.
        for index in staged.indices where staged[index].settled == nil {
            let event = staged[index].event
            if let event {
                events.append(event)
                encodedEvents.append(event.encoded(as: [UInt8].self))
            }
            guard let id = staged[index].id else { continue }
            // Only a change is remembered: retrying a refusal or a no-op decides it again, on a
            // state at least as new, which is as safe as the first time.
            if let event {
                // What it asked is made now, for a change with an id, from the field: a
                // computed property of the element copied the whole staged change
                // (docs/BENCHMARKS.md, "Stop 58").
                requests.append(
                    RememberedRequest(
                        id: id, request: staged[index].change.canonicalForm, reply: staged[index].body,
                        eventSeq: event.seq))
            } else {
                checkedIDs.append(id)
            }
        }
    }

    /// Empties the batch for the next one, keeping its arrays' room when it is small (up to
    /// `largest` elements each), so that a batch does not allocate them anew.
    mutating func removeAll(keepingCapacityUpTo largest: Int) {
        events.removeEach(keepingCapacity: events.capacity <= largest)
        encodedEvents.removeEach(keepingCapacity: encodedEvents.capacity <= largest)
        requests.removeEach(keepingCapacity: requests.capacity <= largest)
        checkedIDs.removeEach(keepingCapacity: checkedIDs.capacity <= largest)
        basis = 0
        state = nil
    }
}
