import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries history`: pages through the kept events (``ClientCommand/history(since:describe:)``).
struct HistoryCommand: RequestSubcommand {
    static let name = "history"
    static let abstract = "Print the events after a seq."

    /// The options of `countries history`.
    struct Options: RequestOptions {
        let since = Option(
            integer: "since", value: "seq", help: "Print the events after this seq.", default: 0
        ).map {
            (since, command) throws(UsageError) in
            guard since >= 0 else { throw command.usageError("--since must be 0 or more") }
            return UInt64(since)
        }
        let json = CommonOptions.json
        let connection: ConnectionOptions
    }

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
