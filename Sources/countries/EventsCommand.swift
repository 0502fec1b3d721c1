import ArgumentParsing
import CountriesClient
import CountriesCore
import Foundation

/// `countries events`: print each change as it happens, in seq order, none twice and none
/// missed. It follows the one subscription machine `watch` uses, and an ``EventFeed`` fills
/// what the machine's snapshots skip from `history`; when that is impossible (history gone, or
/// another store) it says so on stderr and goes on from the service's seq.
struct EventsCommand {
    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let asJSON = command[\.json]
        let since = command[\.since]
        let limit = command[\.count] ?? Int.max
        let setup = try SubscriberSetup(command)
        let fetcher = HistoryFetcher(client: setup.options.makeClient(context: setup.context))
        var feed = EventFeed(start: since.map { .after(.init(store: nil, seq: $0)) } ?? .now)
        var printed = 0
        try StateStream(subscription: setup.subscription).pump { notifications in
            let deliveries = try feed.deliveries(
                for: notifications, replica: setup.subscription.replica, store: setup.subscription.store,
                history: fetcher.page(after:))
            for delivery in deliveries where printed < limit {
                switch delivery {
                case .event(let event):
                    Output.line(
                        asJSON ? String(decoding: event.encoded(), as: UTF8.self) : Output.describe(event))
                    printed += 1
                case .restart(let state, let reason):
                    Output.error(HistoryFetcher.describe(reason, now: state.seq))
                }
            }
            return printed < limit
        }
        return ExitCode.success
    }
}
