import ArgumentParsing
import CountriesClient
import CountriesCore
import CountriesOptions
import CountriesTerminal
import Foundation
import ZeroMQ

/// A one-shot client subcommand: send its requests, print the replies, exit. Each one is a type
/// (RequestCommands.swift) that says what to send and how to describe the reply; a new one
/// that leaves either out does not compile.
protocol RequestSubcommand: Subcommand where Options: RequestOptions {
    var command: ParsedValues<Options> { get }
    /// The commands to send, one after the other (`toggle` sends one per target).
    func requests() -> [Command]
    /// The store a change needs the service to run on (`--if-store`); nil for a query.
    var ifStore: String? { get }
    /// The change's request id (`--id`); nil for a fresh one.
    var requestID: String? { get }
    /// The lines to print for a reply that is not a refusal.
    func describe(_ reply: Reply) -> [String]
}

extension RequestSubcommand {
    /// A query has no id of its own.
    var requestID: String? { nil }

    func run() throws -> Int32 {
        let requests = requests()
        if requestID != nil && requests.count > 1 {
            throw command.parsed.usageError(
                "--id names one change, and this command sends \(requests.count); give one target per command"
            )
        }
        let client = try ClientCommand(command)
        var exitCode = ExitCode.success
        for request in requests {
            let reply = try client.send(request, ifStore: ifStore, id: requestID)
            if !client.report(reply, describe: describe) {
                exitCode = max(exitCode, ExitCode.failure(of: reply))
            }
        }
        return exitCode
    }
}

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
                return report(reply, describe: describe) ? ExitCode.success : ExitCode.failure(of: reply)
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
        throw CommandFailure(
            message: "the history kept growing while it was read; try again", exitCode: ExitCode.unavailable)
    }

    func send(_ command: Command, ifStore: String?, id: String? = nil) throws -> Reply {
        do {
            guard command.changes else { return try client.send(command) }
            return try client.send(Request(id: id ?? RequestID.make(), command: command, ifStore: ifStore))
        } catch {
            var hint = ""
            if error.heardNothing {
                // A CURVE refusal looks the same as no service from here: name both causes.
                hint =
                    options.security == nil
                    ? " (is `countries serve` running there? see --command)"
                    : " (is `countries serve` running there, does it admit this client's key, and is --server-key its public key? see --command)"
            }
            throw CommandFailure(
                message: error.message + hint,
                exitCode: error.code == .outcomeUnknown ? ExitCode.outcomeUnknown : ExitCode.unavailable)
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
