import CountriesCore
import CountriesStore
import Foundation

/// The replies to reads that cost more than a look at the state: `list`, encoded once per seq
/// (a flood of `list`s between changes encodes the list once), and `history`, read from the
/// store a page at a time. The ``CommandHandler`` decides when a read may be answered; this
/// says what the answer is.
final class ReadAnswers {
    private let store: any StateStore
    /// The encoded `list` reply of the state at `seq`.
    private var listReply: (seq: UInt64, body: [UInt8])?
    /// A guess at the `list` reply's bytes at `seq`, for the loop's batch budget.
    private var listBytesGuess: (seq: UInt64, bytes: Int)?

    /// Answers reads of `store`'s state.
    init(store: any StateStore) {
        self.store = store
    }

    /// The `list` reply of `state`, encoded once per seq.
    func list(of state: CountriesState) -> [UInt8] {
        if let listReply, listReply.seq == state.seq { return listReply.body }
        var reply: Reply
        do {
            reply = try state.answer(.list)
        } catch {
            return Reply(error: error).encoded(as: [UInt8].self)  // a list has nothing to refuse
        }
        reply.store = store.identity
        let body = reply.encoded(as: [UInt8].self)
        listReply = (state.seq, body)
        return body
    }

    /// A guess at the bytes of `state`'s `list` reply (exact once it was encoded at its seq).
    func estimatedListBytes(of state: CountriesState) -> Int {
        if let listReply, listReply.seq == state.seq { return listReply.body.count }
        if let listBytesGuess, listBytesGuess.seq == state.seq { return listBytesGuess.bytes }
        let bytes = state.countries.reduce(64) { $0 + Event.estimatedRowBytes(name: $1.name) }
        listBytesGuess = (state.seq, bytes)
        return bytes
    }

    /// One page of the events after `since` up to `state`'s seq: at most
    /// ``Limits/historyPageEvents``, and no more once ``Limits/historyPageBytes`` are reached
    /// (always at least one event), with `more` when it stops before the current seq. A whole
    /// history in one reply cost 400 KB per request at 5,000 events, which a peer that never
    /// reads could pile up by the thousand.
    func history(since: UInt64, of state: CountriesState) throws(CountriesError) -> Reply {
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
            let size = event.estimatedBytes
            if !page.isEmpty && bytes + size > Limits.historyPageBytes { break }
            bytes += size
            page.append(event)
        }
        var reply = Reply(seq: state.seq, events: page)
        reply.store = store.identity
        if let last = page.last, last.seq < state.seq { reply.more = true }
        return reply
    }
}

@available(*, unavailable) extension ReadAnswers: Sendable {}
