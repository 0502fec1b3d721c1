// A live subscriber embedded in a Swift program: the example of docs/EMBEDDING.md, built with
// the package and run by its tests.
//
//   countries-embedding-example [COMMAND-ENDPOINT [EVENTS-ENDPOINT [UPDATES]]]
import CountriesClient
import CountriesCore
import ZeroMQ

let arguments = CommandLine.arguments
let commandEndpoint = arguments.count > 1 ? arguments[1] : Defaults.commandEndpoint
let eventsEndpoint = arguments.count > 2 ? arguments[2] : Defaults.eventsEndpoint
let updatesWanted = arguments.count > 3 ? Int(arguments[3]) ?? Int.max : Int.max

// The SUB socket subscribes before the first `list`, so nothing falls between the two; the
// subscription catches up by itself after gaps, silences and restarts.
let context = try Context()
let subscription = try LiveSubscription(
    context: context, endpoints: .init(command: commandEndpoint, events: eventsEndpoint))

var updates = 0
try SubscriptionLoop(subscription: subscription).run { happening, _ in
    // Show only live data: while the phase is connecting or stale, the replica may be behind.
    guard case .update(let update) = happening, update.phase == .live, let list = update.replica else {
        return true
    }
    let visited = list.rows.filter(\.visited).map(\.name)
    print("seq \(list.seq): \(visited.count) of \(list.count) visited: \(visited.joined(separator: ", "))")
    updates += 1
    return updates < updatesWanted
}
