import ArgumentParsing
import CountriesCore

/// A one-shot client subcommand: send its requests, print the replies, exit. Each one is a type
/// (ListCommand.swift, ToggleCommand.swift, ...) that says what to send and how to describe the
/// reply; a new one that leaves either out does not compile.
protocol RequestSubcommand: Subcommand where Options: RequestOptions {
    var command: ParsedValues<Options> { get }
    /// The commands to send, one after the other (`toggle` sends one per target).
    func requests() -> [Command]
    /// The store a change needs the service to run on (`--if-store`); nil for a query.
    var ifStore: String? { get }
    /// The change's request id (`--id`); nil for a fresh one.
    var requestID: String? { get }
    /// The lines to print for a reply that is not a refusal.
    func describe(_ reply: Reply) -> [String]
}

extension RequestSubcommand {
    /// A query has no id of its own.
    var requestID: String? { nil }

    /// The options: its own and the connection options of a command that only sends requests.
    static var options: Options { Options(connection: .requests(by: name)) }

    func run() throws -> Int32 {
        let requests = requests()
        if requestID != nil && requests.count > 1 {
            throw command.parsed.usageError(
                "--id names one change, and this command sends \(requests.count); give one target per command"
            )
        }
        // The second change of one command is never at the seq the first was asked at.
        if let ifSeq = requests.first?.ifSeq, requests.count > 1 {
            throw command.parsed.usageError(
                "--if-seq \(ifSeq) holds for one change, and this command sends \(requests.count); give one target per command"
            )
        }
        let client = try ClientCommand(command)
        var exitCode = ExitCode.success
        var names: [String]?
        for request in requests {
            let reply = try client.send(request, ifStore: ifStore, id: requestID)
            if !client.report(reply, describe: describe) {
                exitCode = max(exitCode, ExitCode.refusal(of: reply))
                if let hint = suggestion(answering: request, refusedBy: reply, client: client, names: &names)
                {
                    Output.error(hint)
                }
            }
        }
        return exitCode
    }

    /// "Did you mean" after a name the service does not know, for a person (not with `--json`):
    /// the list, read once per command, has a name close to it (``NameSuggestion``).
    private func suggestion(
        answering request: Command, refusedBy reply: Reply, client: ClientCommand, names: inout [String]?
    ) -> String? {
        guard !client.asJSON, reply.failure?.code == .notFound, case .name(let typed)? = request.target else {
            return nil
        }
        if names == nil {
            names = (try? client.send(.query(.list), ifStore: nil))?.countries?.map(\.name) ?? []
        }
        guard let close = NameSuggestion.closest(to: typed, among: names ?? []) else { return nil }
        return "did you mean \(CountryName.quoted(close))?"
    }
}
