import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries reset`.
struct ResetCommand: RequestSubcommand {
    static let name = "reset"
    static let abstract = "Put back the list the service was started with."

    /// The options of `countries reset`.
    struct Options: RequestOptions {
        let ifStore = CommonOptions.ifStore
        let id = CommonOptions.requestID
        let json = CommonOptions.json
        let connection: ConnectionOptions
    }

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] { [.change(.reset)] }

    func describe(_ reply: Reply) -> [String] { ReplyText.reset(reply) }
}
