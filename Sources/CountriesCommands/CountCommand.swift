import ArgumentParsing
import CountriesCore

/// `countries count`.
struct CountCommand: RequestSubcommand {
    static let name = "count"
    static let abstract = "Print how many countries there are."

    let command: ParsedValues<JSONRequestOptions>
    let ifStore: String? = nil

    func requests() -> [Command] { [.query(.count)] }

    func describe(_ reply: Reply) -> [String] { ["\(reply.count ?? 0)"] }
}
