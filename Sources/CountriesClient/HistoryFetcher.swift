import CountriesCore

/// The history an ``EventFeed`` catches up with: pages of `history` through a command client.
public struct HistoryFetcher {
    /// Why a page could not be had.
    public enum Failure: Error {
        /// No reply from the service.
        case unreachable(ClientError)
        /// The service refused (other than "no longer kept"), with its message.
        case refused(String)
    }

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
        guard reply.ok, let events = reply.events else {
            if reply.failure?.code == .historyTruncated { return nil }
            throw .refused(reply.failure?.message ?? "history was refused")
        }
        return (events, reply.store, reply.more ?? false)
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
        case .invalidEvent(_, let reason):
            return "dropped from the service's history: \(reason); going on from seq \(seq)"
        }
    }
}
