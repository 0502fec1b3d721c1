import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries get TARGET`.
struct GetCommand: RequestSubcommand {
    static let name = "get"
    static let abstract = "Print one country."

    /// The options of `countries get`.
    struct Options: RequestOptions {
        let target = CommonOptions.target
        let byName = CommonOptions.byName
        let json = CommonOptions.json
        let connection: ConnectionOptions
    }

    let command: ParsedValues<Options>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.get(command[\.target]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.get(reply, glyphs: Output.glyphs) }
}
