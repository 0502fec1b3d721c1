import CountriesCore
import Foundation

/// A change run on the working state but not committed yet: its reply, its event, and what is
/// needed to run it again on a newer state (a shared store that moved under the batch).
struct StagedChange {
    /// The envelope of the request, to send the reply back on.
    var envelope: [Data]
    var id: String?
    /// The change; what it asked, remembered beside `id`, is its
    /// ``CountriesCore/Change/canonicalForm``, made when needed.
    var change: Change
    var ifStore: String?
    /// What the tally counts of the reply.
    var outcome: AnswerTally.Outcome
    /// The reply, encoded once for the request-id memory and the wire alike (the reply itself
    /// is not kept).
    var body: [UInt8]
    var event: Event?
    /// Answered without a commit: the id was found remembered when a shared store refused the
    /// batch (the first reply, or a `conflict`).
    var settled: [UInt8]?
    /// The request's trace, for its log line and metrics (``RequestTrace/none`` when unread).
    var trace = RequestTrace.none

    init(
        envelope: [Data], id: String?, change: Change, ifStore: String?, reply: Reply,
        event: Event?
    ) {
        self.envelope = envelope
        self.id = id
        self.change = change
        self.ifStore = ifStore
        self.outcome = AnswerTally.Outcome(reply)
        self.body = reply.encoded(as: [UInt8].self)
        self.event = event
    }
}
