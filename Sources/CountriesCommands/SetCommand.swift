import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries set TARGET --visited BOOL`.
struct SetCommand: RequestSubcommand {
    static let name = "set"
    static let abstract = "Set the visited flag of a country."

    /// The options of `countries set`.
    struct Options: RequestOptions {
        let target = CommonOptions.target
        let byName = CommonOptions.byName
        let visited = Option<Bool>(
            OptionSpec(
                name: "visited", valueName: "bool", help: "The new value.", allowedValues: ["true", "false"],
                isRequired: true)
        ) { (command) throws(UsageError) in
            // Required, so the parser has refused a command line without it.
            guard let visited = try command.bool("visited") else {
                throw command.usageError("Missing expected argument '--visited <bool>'")
            }
            return visited
        }
        let ifSeq = CommonOptions.ifSeq
        let ifStore = CommonOptions.ifStore
        let id = CommonOptions.requestID
        let json = CommonOptions.json
        let connection: ConnectionOptions
    }

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] {
        [.change(.set(command[\.target], visited: command[\.visited], ifSeq: command[\.ifSeq]))]
    }

    func describe(_ reply: Reply) -> [String] { ReplyText.changed(reply) }
}
