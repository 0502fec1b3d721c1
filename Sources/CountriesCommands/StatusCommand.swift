import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries status`.
struct StatusCommand: RequestSubcommand {
    static let name = "status"
    static let abstract = "Print the service's status."

    let command: ParsedValues<JSONRequestOptions>
    let ifStore: String? = nil

    func requests() -> [Command] { [.status] }

    func describe(_ reply: Reply) -> [String] { ReplyText.status(reply) }
}
