import ArgumentParsing
import CountriesCore
import CountriesTerminal

/// `countries toggle TARGET...`: one request per target, in order.
struct ToggleCommand: RequestSubcommand {
    static let name = "toggle"
    static let abstract = "Flip the visited flag of one or more countries."
    static let discussion: String? = """
        Each TARGET is one change, sent in turn, as rm takes its files: one the service refuses (no \
        such country) is said on stderr, the others are still made, and the exit is then 1. \
        --id and --if-seq take a single TARGET.
        """

    /// The options of `countries toggle`.
    struct Options: RequestOptions {
        let targets = CommonOptions.targets
        let byName = CommonOptions.byName
        let json = CommonOptions.json
        let ifSeq = CommonOptions.ifSeq
        let ifStore = CommonOptions.ifStore
        let id = CommonOptions.requestID
        let connection: ConnectionOptions
    }

    let command: ParsedValues<Options>
    var ifStore: String? { command[\.ifStore] }
    var requestID: String? { command[\.id] }

    func requests() -> [Command] {
        command[\.targets].map { .change(.toggle($0, ifSeq: command[\.ifSeq])) }
    }

    func describe(_ reply: Reply) -> [String] { ReplyText.changed(reply) }
}
