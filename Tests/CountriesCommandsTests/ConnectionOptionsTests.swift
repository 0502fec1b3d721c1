import ArgumentParsing
import Testing

@testable import CountriesCommands

/// Every subcommand that talks to a service takes the same connection options (issue 10):
/// one alias or script can pass the whole set to any of them.
@Suite struct ConnectionOptionsTests {
    /// The subcommands that talk to a service as a client. Every other subcommand is named in
    /// `notClients`, so a new subcommand has to be put in one list or the other.
    static let clients = [
        "list", "get", "count", "toggle", "set", "add", "remove", "reset", "history", "status", "events",
        "watch", "select", "on-change", "web",
    ]
    /// `serve` is the service, `keygen` talks to no one, and `relay` binds an endpoint of its own
    /// and takes --curve-key and --server-key as a server does (docs/SECURITY.md); `backup` reads
    /// a file; `completion` and `man` print what the declarations give.
    static let notClients = ["serve", "keygen", "relay", "backup", "completion", "man"]

    static let wholeSet = [
        "--command", "ipc:///tmp/c-cmd", "--events", "ipc:///tmp/c-ev", "--timeout", "1234", "--retries", "5",
        "--curve-key", "me.key", "--server-key", "service.pub", "--events-server-key", "relay.pub",
    ]

    /// What each client subcommand needs besides the connection options.
    static func required(_ name: String) -> [String] {
        switch name {
        case "get", "remove": return ["France"]
        case "toggle": return ["France", "3"]
        case "set": return ["France", "--visited", "true"]
        case "add": return ["Narnia"]
        case "on-change": return []
        default: return []
        }
    }

    @Test func everySubcommandIsAClientOrNamedAsNot() {
        let names = CountriesCommandLine.root.subcommands.map(\.name)
        #expect(Set(names) == Set(Self.clients + Self.notClients))
        #expect(Set(Self.clients).isDisjoint(with: Self.notClients))
    }

    @Test(arguments: clients)
    func acceptsTheWholeConnectionSet(_ name: String) throws {
        let parser = CommandLineParser(root: CountriesCommandLine.root, version: "test")
        let trailing = name == "on-change" ? ["--", "true"] : []
        let outcome = try parser.parse(
            [name] + Self.required(name) + Self.wholeSet + trailing, environment: [:])
        guard case .run(let command) = outcome else {
            Issue.record("expected \(name) to run, got \(outcome)")
            return
        }
        #expect(command.value("command") == "ipc:///tmp/c-cmd")
        #expect(command.value("events") == "ipc:///tmp/c-ev")
        #expect(try command.int("timeout") == 1234)
        #expect(try command.int("retries") == 5)
        #expect(command.value("curve-key") == "me.key")
        #expect(command.value("server-key") == "service.pub")
        #expect(command.value("events-server-key") == "relay.pub")
    }

    /// The group is one declaration: the same names, in the same order, under one heading.
    @Test(arguments: clients)
    func theConnectionOptionsAreTheSameGroupEverywhere(_ name: String) throws {
        let spec = try #require(CountriesCommandLine.root.subcommands.first { $0.name == name })
        let group = spec.options.filter { $0.section == "CONNECTION OPTIONS" }
        #expect(
            group.map(\.name) == [
                "command", "events", "timeout", "retries", "curve-key", "server-key", "events-server-key",
            ])
    }

    /// Help stays truthful: a command that has no use for the event endpoint says so.
    @Test(arguments: clients)
    func helpSaysWhichOptionsAreUnused(_ name: String) throws {
        let parser = CommandLineParser(root: CountriesCommandLine.root, version: "test")
        let help = parser.helpText(for: ["countries", name])
        #expect(help.contains("\nCONNECTION OPTIONS:\n"))
        let unused = help.components(separatedBy: "unused by \(name)").count - 1
        let followsEvents = ["events", "watch", "select", "on-change", "web"].contains(name)
        #expect(unused == (followsEvents ? 0 : 2), "\(help)")
    }
}
