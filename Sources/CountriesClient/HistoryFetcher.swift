import CountriesCore

/// The history an ``EventFeed`` catches up with: pages of `history` through a command client.
public struct HistoryFetcher {
    /// Why a page could not be had.
    public enum Failure: Error {
        /// No reply from the service.
        case unreachable(ClientError)
        /// The service refused (other than "no longer kept").
        case refused(CountriesError)

        /// What went wrong, for stderr.
        public var message: String {
            switch self {
            case .unreachable(let error): error.message
            case .refused(let error): error.message
            }
        }

        /// Whether asking again later may succeed: the service did not answer (or nothing
        /// listened), or it said it cannot now (`unavailable`, `storage_error`, or `too_large`
        /// while its unread replies are over budget). A refusal of the request itself, an answer
        /// that is not the protocol's (another program, or another version, at the endpoint), or
        /// an endpoint ZeroMQ cannot use stays what it is.
        public var passes: Bool {
            switch self {
            case .unreachable(let error):
                return [.noReply, .refused].contains(error.code)
            case .refused(let error):
                return [.unavailable, .storageError, .tooLarge].contains(error.code)
            }
        }

        /// Which failure it is, without its details (a byte count, an endpoint): two that differ
        /// only there are the same kind.
        public var kind: String {
            switch self {
            case .unreachable(let error): error.code.rawValue
            case .refused(let error): error.code.rawValue
            }
        }
    }

    /// The longest pause between two asks of a page that did not come.
    public static let maximumPause: Duration = .seconds(5)

    /// The client the pages are asked through.
    public let client: CommandClient

    /// Creates a fetcher.
    public init(client: CommandClient) {
        self.client = client
    }

    /// The page of events after `since`; nil when the service no longer keeps them.
    public func page(after since: UInt64) throws(Failure) -> EventFeed.HistoryPage? {
        let reply: Reply
        do {
            reply = try client.send(.history(since: since))
        } catch {
            throw .unreachable(error)
        }
        if let failure = reply.failure {
            if failure.code == .historyTruncated { return nil }
            throw .refused(failure)
        }
        guard let events = reply.events else {
            // The client already takes a success without `events` for no answer
            // (Reply.missingField); should one get here, it is still not "nothing happened".
            throw .unreachable(
                ClientError(.badReply, endpoint: client.endpoint, "the history reply has no \"events\""))
        }
        return (events, reply.store, reply.more ?? false)
    }

    /// The page of events after `since`, asked again while the failure is one that passes
    /// (``Failure/passes``): a consumer that must see every change waits for the service rather
    /// than end. Before each new ask it calls `pause` with how long to wait (100 ms, doubling up
    /// to ``maximumPause``) and why; `pause` waits and returns true, or returns false to stop
    /// asking, and the failure is thrown then.
    public func page(
        after since: UInt64, pausing pause: (Duration, Failure) -> Bool
    ) throws(Failure) -> EventFeed.HistoryPage? {
        var backoff = Backoff(initial: .milliseconds(100), maximum: Self.maximumPause)
        while true {
            do {
                return try page(after: since)
            } catch {
                guard error.passes, pause(backoff.next(), error) else { throw error }
            }
        }
    }
}

extension EventFeed.RestartReason {
    /// What a restart means, for stderr, when the service is at `seq`.
    public func describe(now seq: UInt64) -> String {
        switch self {
        case .initial:
            return "the list at seq \(seq)"
        case .storeChanged(let from, let to):
            return
                "the service now runs on another store (\(to), was \(from)); its seqs mean other changes, so going on from its seq \(seq)"
        case .historyGone(let after, let upTo):
            return after < upTo
                ? "events \(after + 1) to \(upTo) are no longer kept by the service; going on from seq \(seq)"
                : "the service is at seq \(upTo), behind \(after) (a new store?); going on from seq \(seq)"
        case .historyTooLong(let after, let upTo):
            return
                "events \(after + 1) to \(upTo) weigh more than the service keeps; going on from seq \(seq)"
        case .invalidEvent(_, let reason):
            return "dropped from the service's history: \(reason); going on from seq \(seq)"
        }
    }
}
