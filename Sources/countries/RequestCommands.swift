import ArgumentParsing
import CountriesCore
import CountriesOptions
import CountriesTerminal
import Foundation

// The one-shot client subcommands, one type each: what they send and what they print (their
// options: CountriesOptions). ClientCommand.swift holds what they share.

/// `countries list`.
struct ListCommand: RequestSubcommand {
    static let name = "list"
    static let abstract = "Print every country, in order."
    typealias Options = JSONRequestOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.list)] }

    func describe(_ reply: Reply) -> [String] { ReplyText.list(reply, glyphs: Output.glyphs) }
}

/// `countries get TARGET`.
struct GetCommand: RequestSubcommand {
    static let name = "get"
    static let abstract = "Print one country."
    typealias Options = GetOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.get(command[\.target]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.get(reply, glyphs: Output.glyphs) }
}

/// `countries count`.
struct CountCommand: RequestSubcommand {
    static let name = "count"
    static let abstract = "Print how many countries there are."
    typealias Options = JSONRequestOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.count)] }

    func describe(_ reply: Reply) -> [String] { ["\(reply.count ?? 0)"] }
}

/// `countries toggle TARGET...`: one request per target, in order.
struct ToggleCommand: RequestSubcommand {
    static let name = "toggle"
    static let abstract = "Flip the visited flag of one or more countries."
    typealias Options = ToggleOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }

    func requests() -> [Command] {
        command[\.targets].map { .change(.toggle($0, ifSeq: command[\.ifSeq])) }
    }

    func describe(_ reply: Reply) -> [String] { ReplyText.changed(reply) }
}

/// `countries set TARGET --visited BOOL`.
struct SetCommand: RequestSubcommand {
    static let name = "set"
    static let abstract = "Set the visited flag of a country."
    typealias Options = SetOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }

    func requests() -> [Command] {
        [.change(.set(command[\.target], visited: command[\.visited], ifSeq: command[\.ifSeq]))]
    }

    func describe(_ reply: Reply) -> [String] { ReplyText.changed(reply) }
}

/// `countries add NAME`.
struct AddCommand: RequestSubcommand {
    static let name = "add"
    static let abstract = "Append a country to the list."
    typealias Options = AddOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }

    func requests() -> [Command] { [.change(.add(name: command[\.name], visited: command[\.visited]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.added(reply) }
}

/// `countries remove TARGET`.
struct RemoveCommand: RequestSubcommand {
    static let name = "remove"
    static let abstract = "Remove a country; the rows after it move up one."
    typealias Options = RemoveOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }

    func requests() -> [Command] { [.change(.remove(command[\.target]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.removed(reply) }
}

/// `countries reset`.
struct ResetCommand: RequestSubcommand {
    static let name = "reset"
    static let abstract = "Put back the list the service was started with."
    typealias Options = ResetOptions

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }

    func requests() -> [Command] { [.change(.reset)] }

    func describe(_ reply: Reply) -> [String] { ReplyText.reset(reply) }
}

/// `countries history`: pages through the kept events (``ClientCommand/history(since:describe:)``).
struct HistoryCommand: RequestSubcommand {
    static let name = "history"
    static let abstract = "Print the events after a seq."
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
struct StatusCommand: RequestSubcommand {
    static let name = "status"
    static let abstract = "Print the service's status."
    typealias Options = JSONRequestOptions

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.status] }

    func describe(_ reply: Reply) -> [String] { ReplyText.status(reply) }
}
