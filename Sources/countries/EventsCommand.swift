import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesOptions
import CountriesTerminal
import Foundation

/// `countries events`: print each change as it happens, in seq order, none twice and none
/// missed. It follows the one subscription machine `watch` uses, and an ``EventFeed`` fills
/// what the machine's snapshots skip from `history`; when that is impossible (history gone, or
/// another store) it says so on stderr and goes on from the service's seq.
struct EventsCommand: EventsDeclaration {
    typealias Options = EventsOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let asJSON = command[\.json]
        let since = command[\.since]
        let limit = command[\.count] ?? Int.max
        let setup = try SubscriberSetup(command)
        var feed = EventFeed(start: since.map { .after(.init(store: nil, seq: $0)) } ?? .now)
        var printed = 0
        let history = setup.history()
        try setup.follow { update in
            let deliveries = try feed.deliveries(
                for: update.notifications, replica: update.replica, store: update.store,
                history: history)
            for delivery in deliveries where printed < limit {
                switch delivery {
                case .event(let event):
                    if asJSON {
                        Output.json(event.encoded())
                    } else {
                        Output.line(ReplyText.event(event, glyphs: Output.glyphs))
                    }
                    printed += 1
                case .restart(let state, let reason):
                    Output.error(reason.describe(now: state.seq))
                }
            }
            return printed < limit
        }
        return ExitCode.success
    }
}
