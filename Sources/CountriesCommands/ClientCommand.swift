import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesTerminal
import Foundation
import ZeroMQ

/// What the one-shot client subcommands share: the client, sending with a hint when nobody
/// answers, printing a reply as text or JSON.
struct ClientCommand {
    let options: ClientOptions
    let asJSON: Bool
    private let context: Context
    private let client: CommandClient

    init<Options: RequestOptions>(_ command: ParsedValues<Options>) throws {
        options = try ClientOptions(command)
        asJSON = command[\.json]
        context = try Context()
        client = options.makeClient(context: context)
    }

    /// `history` pages through (each reply holds at most ``Limits/historyPageEvents``; `more`
    /// says to ask again after the last seq). Text lines are printed page by page; `--json`
    /// prints one reply holding every event, as a script expects.
    func history(since: UInt64, describe: (Reply) -> [String]) throws -> Int32 {
        var since = since
        var all: [Event] = []
        // Every page holds at least one event, and at most `retainedEvents` are kept: bounded.
        for _ in 0...Limits.retainedEvents {
            let reply = try send(.history(since: since), ifStore: nil)
            guard reply.ok else {
                return report(reply, describe: describe) ? ExitCode.success : ExitCode.refusal(of: reply)
            }
            let events = reply.events ?? []
            if asJSON {
                all += events
            } else {
                for event in events { Output.line(ReplyText.event(event, glyphs: Output.glyphs)) }
            }
            guard reply.more == true, let last = events.last else {
                if asJSON { Output.json(Reply(seq: reply.seq, events: all)) }
                return ExitCode.success
            }
            since = last.seq
        }
        throw CommandError.historyKeptGrowing
    }

    func send(_ command: Command, ifStore: String?, id: String? = nil) throws -> Reply {
        do {
            guard command.changes else { return try client.send(command) }
            return try client.send(Request(id: id ?? RequestID.make(), command: command, ifStore: ifStore))
        } catch {
            var hint = ""
            if error.heardNothing {
                // A CURVE refusal looks the same as no service from here: name both causes.
                let question =
                    options.security == nil
                    ? "is `countries serve` running there?"
                    : "is `countries serve` running there, does it admit this client's key, and is --server-key its public key?"
                // After an unknown outcome's advice to send it again, a sentence of its own.
                hint =
                    error.code == .outcomeUnknown
                    ? "; nothing answered: \(question) (see --command)" : " (\(question) see --command)"
            }
            var failure = error
            failure.message += hint
            throw failure
        }
    }

    /// Prints the reply; false when it was a refusal.
    func report(_ reply: Reply, describe: (Reply) -> [String]) -> Bool {
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
}
