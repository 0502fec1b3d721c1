import CountriesCore

/// Whether a command peer's request is answered, by what the peers leave unread
/// (``UnreadReplies``; docs/RELIABILITY.md, "Bounds per peer"). Plain values, so the rule is
/// tested without sockets.
///
/// - A peer holding ``Bounds/perPeer`` bytes unread is refused `too_large` until it reads.
/// - While all peers together hold ``Bounds/inAll``, a peer holding more than a reader's replies
///   in flight (``Bounds/ofAReader``) is not answered at all: its request is dropped, nothing
///   changed (a refusal would be one more reply it leaves unread), and `list`, `reset` and
///   `history`, whose replies are big, are refused for everyone. Small replies to peers that
///   read still go out, so toggles go on.
///
/// The per-peer bound alone let many peers each hold it: 30 DEALERs that asked for the
/// longest list three times and read nothing made the service hold 945 MB.
enum ReplyAdmission: Equatable {
    /// Answer it.
    case answer
    /// Answer it with this refusal; nothing changed.
    case refuse(CountriesError)
    /// Answer nothing; nothing changed. `reason` is for the log.
    case drop(reason: String)

    /// The bounds, from ``ServiceConfiguration``.
    struct Bounds: Equatable {
        /// Bytes one peer may leave unread (``ServiceConfiguration/maximumUnreadReplyBytes``).
        var perPeer: Int
        /// Bytes all peers together may leave unread
        /// (``ServiceConfiguration/maximumUnreadReplyBytesInAll``).
        var inAll: Int
        /// What a peer may hold and still be answered once ``inAll`` is reached
        /// (``ServiceConfiguration/unreadReplyBytesOfAReader``).
        var ofAReader: Int

        /// No bound at all: what a handler without an ``UnreadReplies`` keeps.
        static let unbounded = Bounds(perPeer: .max, inAll: .max, ofAReader: .max)
    }

    /// The decision for a request of a peer holding `peerUnread` bytes, while all peers hold
    /// `totalUnread`, when its reply is likely `likely`. `peerUnread` and `likely` are asked
    /// only once `totalUnread` reaches a bound, so the loop's check of every request is one
    /// comparison.
    static func decide(
        totalUnread: Int, peerUnread: () -> Int, likely: () -> IncomingRequest.LikelyReply, bounds: Bounds
    ) -> ReplyAdmission {
        guard totalUnread >= min(bounds.perPeer, bounds.inAll) else { return .answer }
        let unread = peerUnread()
        if unread >= bounds.perPeer {
            return .refuse(
                CountriesError(
                    .tooLarge,
                    "\(unread) bytes of replies to this client are still unread (at most \(bounds.perPeer) may wait); nothing changed: read them, then send more"
                ))
        }
        guard totalUnread >= bounds.inAll else { return .answer }
        if unread > bounds.ofAReader {
            return .drop(
                reason:
                    "the service holds \(totalUnread) bytes of replies its clients have not read (at most \(bounds.inAll)), and this client more than \(bounds.ofAReader) of them; it is answered again once it reads"
            )
        }
        if likely() != .small {
            return .refuse(
                CountriesError(
                    .tooLarge,
                    "the service holds \(totalUnread) bytes of replies its clients have not read (at most \(bounds.inAll)); a list, reset or history reply waits until they do: nothing changed, retry later"
                ))
        }
        return .answer
    }
}
