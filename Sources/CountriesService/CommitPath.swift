import CountriesCore
import CountriesStore
import Foundation

/// How staged changes become committed, one kind per kind of store (docs/HA.md, "Commits"):
/// ``LocalCommitPath`` for a store this process owns alone, ``SharedCommitPath`` for one that
/// replicas share. Each promise of a kind is kept in its path, and nowhere else.
protocol CommitPath: AnyObject {
    /// Counts and logs what goes out.
    var tally: AnswerTally { get }

    /// Before a change with an id is staged: what the store already says of the id (its first
    /// reply, or a refusal), or nil to stage it (the id is new, or the commit checks it).
    func earlyAnswer(forID id: String, asking asked: Data?) -> EarlyAnswer?

    /// Before the first read of a batch: brings `state` up to what the store holds, or says
    /// why it cannot.
    func prepareRead(_ state: inout CountriesState) -> CountriesError?

    /// Commits `staged`, run on `working` from `state`. On success `state` becomes `working`,
    /// else `working` goes back to `state`. Returns what to send, replies in arrival order.
    func commit(_ staged: [StagedChange], state: inout CountriesState, working: inout CountriesState)
        -> [Outgoing]
}

/// What a store already says of a change's id.
enum EarlyAnswer {
    /// The first reply to it, byte for byte.
    case reply(Data)
    /// A refusal: the id was used for another change, or cannot be checked now.
    case refusal(CountriesError)
}

extension CommitPath {
    /// The replies to a committed batch, in arrival order (each counted as it goes out).
    func replies(to staged: [StagedChange]) -> [Outgoing] {
        staged.map { change in
            if let settled = change.settled {
                tally.countServed(change.trace, seq: nil)
                return .reply(envelope: change.envelope, body: settled)
            }
            tally.count(change.reply, change.trace)
            return .reply(envelope: change.envelope, body: change.body)
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
                tally.countServed(change.trace, seq: nil)
                return .reply(envelope: change.envelope, body: settled)
            }
            return .reply(envelope: change.envelope, body: tally.refuse(failure, change.trace).encoded())
        }
    }
}

extension StoreBatch {
    /// The batch that commits `staged` (those not settled yet) on top of seq `basis`.
    init(_ staged: [StagedChange], basis: UInt64, state: CountriesState) {
        self.init()
        self.basis = basis
        self.state = state
        for change in staged where change.settled == nil {
            if let event = change.event {
                events.append(event)
                encodedEvents.append(event.encoded())
            }
            guard let id = change.id else { continue }
            // Only a change is remembered: retrying a refusal or a no-op decides it again, on a
            // state at least as new, which is as safe as the first time.
            if let event = change.event {
                requests.append(
                    RememberedRequest(id: id, request: change.asked, reply: change.body, eventSeq: event.seq))
            } else {
                checkedIDs.append(id)
            }
        }
    }
}
