import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries remove TARGET`.
struct RemoveCommand: RequestSubcommand {
    static let name = "remove"
    static let abstract = "Remove a country; the rows after it move up one."

    /// The options of `countries remove`.
    struct Options: RequestOptions {
        let target = CommonOptions.target
        let byName = CommonOptions.byName
        let ifStore = CommonOptions.ifStore
        let id = CommonOptions.requestID
        let json = CommonOptions.json
        let connection: ConnectionOptions
    }

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] { [.change(.remove(command[\.target]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.removed(reply) }
}
