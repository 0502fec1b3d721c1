import ArgumentParsing
import CountriesCore
import CountriesOptions
import CountriesTerminal
import Foundation

// The one-shot client subcommands, one type each: what they send and what they print (their
// name, help and options: their declarations in CountriesOptions). ClientCommand.swift holds what they share.

/// `countries list`.
struct ListCommand: RequestSubcommand, ListDeclaration {
    typealias Options = JSONRequestOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.list)] }

    func describe(_ reply: Reply) -> [String] { ReplyText.list(reply, glyphs: Output.glyphs) }
}

/// `countries get TARGET`.
struct GetCommand: RequestSubcommand, GetDeclaration {
    typealias Options = GetOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.get(command[\.target]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.get(reply, glyphs: Output.glyphs) }
}

/// `countries count`.
struct CountCommand: RequestSubcommand, CountDeclaration {
    typealias Options = JSONRequestOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.count)] }

    func describe(_ reply: Reply) -> [String] { ["\(reply.count ?? 0)"] }
}

/// `countries toggle TARGET...`: one request per target, in order.
struct ToggleCommand: RequestSubcommand, ToggleDeclaration {
    typealias Options = ToggleOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] {
        command[\.targets].map { .change(.toggle($0, ifSeq: command[\.ifSeq])) }
    }

    func describe(_ reply: Reply) -> [String] { ReplyText.changed(reply) }
}

/// `countries set TARGET --visited BOOL`.
struct SetCommand: RequestSubcommand, SetDeclaration {
    typealias Options = SetOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] {
        [.change(.set(command[\.target], visited: command[\.visited], ifSeq: command[\.ifSeq]))]
    }

    func describe(_ reply: Reply) -> [String] { ReplyText.changed(reply) }
}

/// `countries add NAME`.
struct AddCommand: RequestSubcommand, AddDeclaration {
    typealias Options = AddOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] { [.change(.add(name: command[\.name], visited: command[\.visited]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.added(reply) }
}

/// `countries remove TARGET`.
struct RemoveCommand: RequestSubcommand, RemoveDeclaration {
    typealias Options = RemoveOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] { [.change(.remove(command[\.target]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.removed(reply) }
}

/// `countries reset`.
struct ResetCommand: RequestSubcommand, ResetDeclaration {
    typealias Options = ResetOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] { [.change(.reset)] }

    func describe(_ reply: Reply) -> [String] { ReplyText.reset(reply) }
}

/// `countries history`: pages through the kept events (``ClientCommand/history(since:describe:)``).
struct HistoryCommand: RequestSubcommand, HistoryDeclaration {
    typealias Options = HistoryOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func run() throws -> Int32 {
        try ClientCommand(command).history(since: command[\.since], describe: describe)
    }

    func requests() -> [Command] { [.history(since: command[\.since])] }

    func describe(_ reply: Reply) -> [String] {
        (reply.events ?? []).map { ReplyText.event($0, glyphs: Output.glyphs) }
    }
}

/// `countries status`.
struct StatusCommand: RequestSubcommand, StatusDeclaration {
    typealias Options = JSONRequestOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.status] }

    func describe(_ reply: Reply) -> [String] { ReplyText.status(reply) }
}
