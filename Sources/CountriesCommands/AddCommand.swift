import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries add NAME`.
struct AddCommand: RequestSubcommand {
    static let name = "add"
    static let abstract = "Append a country to the list."

    /// The options of `countries add`.
    struct Options: RequestOptions {
        let name = Argument("name", help: "The country's name (1 to 100 characters).")
        let visited = Option(flag: "visited", help: "Add it as visited.")
        let ifStore = CommonOptions.ifStore
        let id = CommonOptions.requestID
        let json = CommonOptions.json
        let connection: ConnectionOptions
    }

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] { [.change(.add(name: command[\.name], visited: command[\.visited]))] }

    func describe(_ reply: Reply) -> [String] { ReplyText.added(reply) }
}
