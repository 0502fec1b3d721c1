import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries list`.
struct ListCommand: RequestSubcommand {
    static let name = "list"
    static let abstract = "Print every country, in order."

    let command: ParsedValues<JSONRequestOptions>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.list)] }

    func describe(_ reply: Reply) -> [String] { ReplyText.list(reply, glyphs: Output.glyphs) }
}
