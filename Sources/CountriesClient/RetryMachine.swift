import CountriesCore

/// The one retry policy of every client (``CommandClient`` for the one-shot commands,
/// ``PendingRequests`` for `select`, `web` and the subscriptions): which endpoint a request
/// goes to next, and how it ends. A plain value, driven by what happened to each try, so every
/// sequence of timeouts and replies is tested without sockets.
///
/// The promise it keeps (docs/PROTOCOL.md, "Outcomes"): once any try of a change may have been
/// applied (no reply came, a reply that is not the protocol's, `unavailable`, or a socket that
/// failed after the try was sent), the request
/// ends with the change's own reply or as ``Verdict/outcomeUnknown(_:)``, never with a definite
/// failure; a `storage_error` from a later try says only that *that* try changed nothing, and a
/// reply from an endpoint of another store than the change's `if_store` says nothing of it at
/// all.
public struct RetryMachine: Sendable, Equatable {
    /// What to do next.
    public enum Step: Sendable, Equatable {
        /// Send the request (same bytes, same id) to the endpoint at this index.
        case send(to: Int)
        /// The request is over.
        case finish(Verdict)
    }

    /// How a request ended.
    public enum Verdict: Sendable, Equatable {
        /// The service's answer to it: a success, or a refusal it decided (for a change, a
        /// definite one: nothing was applied).
        case replied(Reply, from: Int)
        /// A change that may or may not have been applied: some try got no reply or
        /// `unavailable`, and no later try brought the change's own reply. The reply of the
        /// last try, if it had one.
        case outcomeUnknown(Reply?)
        /// A read that got no reply from any endpoint after every try.
        case noReply
        /// Every endpoint is unusable (ZeroMQ refused it: a malformed endpoint); nothing was sent.
        case unusable
        /// Nothing is listening at the endpoints at these indices, and every other endpoint is
        /// unusable: no try reached a service, so nothing was sent (and, for a change, nothing
        /// applied).
        case refused([Int])
    }

    /// How many endpoints there are.
    public let endpoints: Int
    /// Tries in all (at least one per endpoint).
    public let tries: Int
    /// Whether the request may change the list: then a try without an answer leaves its outcome
    /// unknown.
    public let changes: Bool
    /// The store a change is meant for (its `if_store`): an endpoint whose reply names another
    /// store serves another list, and its answer says nothing of this change.
    public let store: String?
    /// The endpoint of the try in flight, or of the last one.
    public private(set) var current: Int
    /// Tries sent so far.
    public private(set) var sent = 0
    /// Whether some try may have been applied.
    public private(set) var mayHaveApplied = false
    private var unusable: Set<Int> = []
    /// The endpoints where nothing listens, in the order found (also in `unusable`).
    private var refusedEndpoints: [Int] = []

    /// A request to `endpoints` endpoints, first to `first` (the one that answered last),
    /// `tries` times in all (at least once to each endpoint); `store` is a change's `if_store`.
    public init(endpoints: Int, tries: Int, first: Int = 0, changes: Bool, store: String? = nil) {
        precondition(endpoints > 0, "a request needs an endpoint")
        self.endpoints = endpoints
        self.tries = max(1, tries, endpoints)
        self.changes = changes
        self.store = store
        current = min(max(0, first), endpoints - 1)
    }

    /// The first try.
    public mutating func start() -> Step {
        sent = 1
        return .send(to: current)
    }

    /// The try in flight got no reply within its timeout.
    public mutating func timedOut() -> Step {
        if changes { mayHaveApplied = true }
        return next(lastReply: nil)
    }

    /// The try in flight was answered with a frame that is not a protocol reply (a proxy's error
    /// page, a damaged frame). It says nothing of the request: a change may have been applied
    /// before whatever answered did, so its outcome is unknown until a later try brings the
    /// change's own reply (same id). The request goes on as after a timeout; a read that gets
    /// nothing better ends as ``Verdict/noReply``.
    public mutating func receivedUndecodable() -> Step {
        if changes { mayHaveApplied = true }
        return next(lastReply: nil)
    }

    /// The try in flight could not be sent: ZeroMQ refused the endpoint, which is skipped from
    /// now on.
    public mutating func couldNotSend() -> Step {
        unusable.insert(current)
        if unusable.count == endpoints { return .finish(noneLeft()) }
        return next(lastReply: nil)
    }

    /// The try in flight was sent, then its socket failed before a reply could be read (ZeroMQ
    /// refused a poll or a receive: the context is ending, say). The request may have reached the
    /// service, so a change's outcome is unknown from now on, as after a timeout; the endpoint is
    /// skipped from now on, like one that could not be used.
    public mutating func failedAfterSending() -> Step {
        if changes { mayHaveApplied = true }
        return couldNotSend()
    }

    /// The caller stopped waiting for the try in flight (it is told to stop): the request ends
    /// now. The try was sent, so a change's outcome is unknown.
    public mutating func stopped() -> Step {
        if changes { mayHaveApplied = true }
        return .finish(verdict(lastReply: nil))
    }

    /// The try in flight found nothing listening at its endpoint (the connection was refused, or
    /// there is no socket file): nothing was sent. The request moves on to the next endpoint at
    /// once, and skips this one from now on; with none left, it ends.
    public mutating func refused() -> Step {
        unusable.insert(current)
        refusedEndpoints.append(current)
        if unusable.count == endpoints { return .finish(noneLeft()) }
        return next(lastReply: nil)
    }

    /// How a request ends when no endpoint is left to try and no reply came.
    private func noneLeft() -> Verdict {
        if mayHaveApplied { return .outcomeUnknown(nil) }
        return refusedEndpoints.isEmpty ? .unusable : .refused(refusedEndpoints)
    }

    /// The try in flight was answered.
    public mutating func received(_ reply: Reply) -> Step {
        if let store, let named = reply.store, named != store {
            // Another store's endpoint (a misconfigured `--command A,B`): it refused this change,
            // but an earlier try may have been applied to the store the change is for. Never
            // again to this endpoint; the others may still bring the change's own reply.
            unusable.insert(current)
            if unusable.count == endpoints { return .finish(verdict(lastReply: reply)) }
            return next(lastReply: reply)
        }
        switch reply.failure?.code {
        case .unavailable?:
            // The service itself does not know whether it applied it.
            if changes { mayHaveApplied = true }
            return next(lastReply: reply)
        case .storageError?:
            // This try changed nothing; another replica may have a quorum, and after an unknown
            // try only the change's own reply (same id) can settle it.
            if endpoints > 1 || mayHaveApplied { return next(lastReply: reply) }
            return .finish(.replied(reply, from: current))
        default:
            return .finish(.replied(reply, from: current))
        }
    }

    /// The next try, on the next usable endpoint, or the end.
    private mutating func next(lastReply: Reply?) -> Step {
        guard sent < tries else { return .finish(verdict(lastReply: lastReply)) }
        repeat {
            current = (current + 1) % endpoints
        } while unusable.contains(current)
        sent += 1
        return .send(to: current)
    }

    private func verdict(lastReply: Reply?) -> Verdict {
        if mayHaveApplied { return .outcomeUnknown(lastReply) }
        if let lastReply { return .replied(lastReply, from: current) }
        return .noReply
    }
}
