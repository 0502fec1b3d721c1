import ArgumentParsing
import CountriesClient
import CountriesCore
import Foundation
import ZeroMQ

/// The one-shot client subcommands: send a request, print the reply, exit.
struct ClientCommand {
    let command: ParsedCommand
    let options: ClientOptions

    func run() throws -> Int32 {
        let context = try Context()
        let client = options.makeClient(context: context)
        let asJSON = command.flag("json")

        switch command.path.last ?? "" {
        case "toggle":
            let ifSeq = try command.seq("if-seq")
            var exitCode = ExitCode.success
            for target in command.arguments("target") {
                let reply = try send(client, .change(.toggle(command.reference(target), ifSeq: ifSeq)))
                if !report(reply, asJSON: asJSON, describe: changedLine) { exitCode = ExitCode.refused }
            }
            return exitCode
        case "history":
            return try history(client, since: try command.seq("since") ?? 0, asJSON: asJSON)
        default:
            let reply = try send(client, try singleCommand())
            return report(reply, asJSON: asJSON, describe: describe) ? ExitCode.success : ExitCode.refused
        }
    }

    private func singleCommand() throws -> Command {
        let target = { () -> CountryReference in command.reference(command.argument("target") ?? "") }
        switch command.path.last ?? "" {
        case "list": return .query(.list)
        case "count": return .query(.count)
        case "get": return .query(.get(target()))
        case "set":
            guard let visited = try command.bool("visited") else {
                throw command.usageError("Missing expected argument '--visited <bool>'")
            }
            return .change(.set(target(), visited: visited, ifSeq: try command.seq("if-seq")))
        case "add":
            return .change(.add(name: command.argument("name") ?? "", visited: command.flag("visited")))
        case "remove": return .change(.remove(target()))
        case "reset": return .change(.reset)
        case "history": return .history(since: try command.seq("since") ?? 0)
        case "status": return .status
        default:
            throw CommandFailure(
                message: "no such command: \(command.path.joined(separator: " "))",
                exitCode: ExitCode.software)
        }
    }

    /// `history` pages through (each reply holds at most ``Limits/historyPageEvents``; `more`
    /// says to ask again after the last seq). Text lines are printed page by page; `--json`
    /// prints one reply holding every event, as a script expects.
    private func history(_ client: CommandClient, since: UInt64, asJSON: Bool) throws -> Int32 {
        var since = since
        var all: [Event] = []
        // Every page holds at least one event, and at most `retainedEvents` are kept: bounded.
        for _ in 0...Limits.retainedEvents {
            let reply = try send(client, .history(since: since))
            guard reply.ok else {
                return report(reply, asJSON: asJSON, describe: describe) ? ExitCode.success : ExitCode.refused
            }
            let events = reply.events ?? []
            if asJSON {
                all += events
            } else {
                for line in events.map(Output.describe) { Output.line(line) }
            }
            guard reply.more == true, let last = events.last else {
                if asJSON { Output.json(Reply(seq: reply.seq, events: all)) }
                return ExitCode.success
            }
            since = last.seq
        }
        throw CommandFailure(
            message: "the history kept growing while it was read; try again", exitCode: ExitCode.unavailable)
    }

    private func send(_ client: CommandClient, _ command: Command) throws -> Reply {
        do {
            guard case .change = command, let ifStore = self.command.value("if-store") else {
                return try client.send(command)
            }
            return try client.send(Request(id: RequestID.make(), command: command, ifStore: ifStore))
        } catch {
            var hint = ""
            if error.code == .noReply {
                // A CURVE refusal looks the same as no service from here: name both causes.
                hint =
                    options.security == nil
                    ? " (is `countries serve` running there? see --command)"
                    : " (is `countries serve` running there, does it admit this client's key, and is --server-key its public key? see --command)"
            }
            throw CommandFailure(message: error.message + hint, exitCode: ExitCode.unavailable)
        }
    }

    /// Prints the reply; false when it was a refusal.
    private func report(_ reply: Reply, asJSON: Bool, describe: (Reply) -> [String]) -> Bool {
        if asJSON {
            Output.json(reply)
        }
        guard reply.ok else {
            if !asJSON { Output.error(reply.failure?.message ?? "the service refused the command") }
            return false
        }
        if !asJSON {
            for line in describe(reply) { Output.line(line) }
        }
        return true
    }

    private func changedLine(_ reply: Reply) -> [String] {
        guard let country = reply.country else { return [] }
        return ["\(country.name): \(Output.visitedWord(country.visited)) (seq \(reply.seq ?? 0))"]
    }

    private func describe(_ reply: Reply) -> [String] {
        switch command.path.last ?? "" {
        case "list":
            let rows = reply.countries ?? []
            let visited = rows.filter(\.visited).count
            return Output.table(rows) + ["\(visited) of \(rows.count) visited (seq \(reply.seq ?? 0))"]
        case "get":
            return reply.country.map { Output.table([$0]) } ?? []
        case "count":
            return ["\(reply.count ?? 0)"]
        case "set":
            return changedLine(reply)
        case "add":
            guard let country = reply.country else { return [] }
            return ["Added \(country.name) at index \(country.index) (seq \(reply.seq ?? 0))"]
        case "remove":
            guard let country = reply.country else { return [] }
            return ["Removed \(country.name) from index \(country.index) (seq \(reply.seq ?? 0))"]
        case "reset":
            return ["Reset to \(reply.countries?.count ?? 0) countries (seq \(reply.seq ?? 0))"]
        case "history":
            return (reply.events ?? []).map(Output.describe)
        case "status":
            return statusLines(reply)
        default:
            return []
        }
    }

    private func statusLines(_ reply: Reply) -> [String] {
        let rows =
            [("seq", "\(reply.seq ?? 0)"), ("countries", "\(reply.count ?? 0)")] + (reply.status?.lines ?? [])
        return rows.map { label, value in
            "\(label):".padding(toLength: 18, withPad: " ", startingAt: 0) + value
        }
    }
}
