import ArgumentParsing
import CountriesCore
import CountriesService
import Testing

@testable import CountriesCommands

/// The registry is the one list of subcommands (issue 11): the parser's spec tree, the help and
/// the dispatch all come from it, so none can be parsed but not run (the old exit-70 path).
@Suite struct RegistryTests {
    static var registry: SubcommandRegistry { CountriesCommandLine.registry }
    static let names = registry.subcommands.map { $0.name }

    /// The least each subcommand needs to parse.
    static func minimal(_ name: String) -> [String] {
        switch name {
        case "get", "remove": return ["France"]
        case "toggle": return ["France", "3"]
        case "set": return ["France", "--visited", "true"]
        case "add": return ["Narnia"]
        case "keygen": return ["me"]
        case "backup": return ["copy.db"]
        case "on-change": return ["--", "true"]
        case "completion": return ["bash"]
        default: return []
        }
    }

    static func parsed(_ arguments: [String], environment: [String: String] = [:]) throws -> ParsedCommand {
        let parser = CommandLineParser(root: CountriesCommandLine.root, version: "test")
        guard case .run(let command) = try parser.parse(arguments, environment: environment) else {
            Issue.record("expected \(arguments) to run")
            throw UsageError(message: "no run", commandPath: [], usage: "")
        }
        return command
    }

    @Test func theSpecTreeIsTheRegistry() {
        #expect(CountriesCommandLine.root.subcommands.map(\.name) == Self.names)
        #expect(Set(Self.names).count == Self.names.count)
        #expect(
            Self.names == [
                "serve", "list", "get", "count", "toggle", "set", "add", "remove", "reset", "history",
                "status",
                "events", "watch", "select", "on-change", "web", "keygen", "relay", "backup", "completion",
                "man",
            ])
    }

    /// Every registered subcommand parses and is made as its own type: dispatch cannot miss one.
    @Test(arguments: names)
    func everyRegisteredSubcommandDispatches(_ name: String) throws {
        let command = try Self.parsed([name] + Self.minimal(name))
        let made = try Self.registry.make(command)
        #expect(type(of: made).name == name)
        #expect(type(of: made).spec.name == name)
    }

    /// The defaults come from one place: the values a command gets and the help it shows.
    @Test func defaultsAreTheLibrariesDefaults() throws {
        let list = try #require(try Self.registry.make(Self.parsed(["list"])) as? ListCommand)
        let connection = list.command[\.connection]
        #expect(connection[\.command] == Defaults.commandEndpoint)
        #expect(connection[\.events] == Defaults.eventsEndpoint)
        #expect(connection[\.timeout] == Defaults.requestTimeout)
        #expect(connection[\.retries] == Defaults.requestTries)

        let watch = try #require(try Self.registry.make(Self.parsed(["watch"])) as? WatchCommand)
        #expect(watch.command[\.heartbeat] == Defaults.heartbeatInterval)

        let serve = try #require(try Self.registry.make(Self.parsed(["serve"])) as? ServeCommand)
        let service = ServiceConfiguration()
        #expect(serve.command[\.command] == service.commandEndpoint)
        #expect(serve.command[\.events] == service.eventsEndpoint)
        #expect(serve.command[\.db] == service.storePath)
        #expect(serve.command[\.heartbeat] == service.heartbeatInterval)
        #expect(serve.command[\.logLevel] == .info)
        #expect(serve.command[\.logFormat] == .text)

        let relay = try #require(try Self.registry.make(Self.parsed(["relay"])) as? RelayCommand)
        #expect(relay.command[\.from] == Defaults.eventsEndpoint)
        #expect(relay.command[\.bind] == Defaults.relayEndpoint)

        let parser = CommandLineParser(root: CountriesCommandLine.root, version: "test")
        #expect(parser.helpText(for: ["countries", "list"]).contains(Defaults.commandEndpoint))
        #expect(
            parser.helpText(for: ["countries", "relay"]).contains(Defaults.relayEndpoint))
    }

    /// Typed values: a seq is a UInt64, a target a reference, a period a Duration.
    @Test func valuesAreTyped() throws {
        let toggle = try #require(
            try Self.registry.make(
                Self.parsed(["toggle", "3", "France", "--if-seq", "7", "--timeout", "50"]))
                as? ToggleCommand)
        #expect(
            toggle.requests() == [
                .change(.toggle(.index(3), ifSeq: 7)), .change(.toggle(.name("France"), ifSeq: 7)),
            ])
        #expect(toggle.ifStore == nil)
        #expect(toggle.command[\.connection][\.timeout] == .milliseconds(50))
        let list = try #require(try Self.registry.make(Self.parsed(["list"])) as? ListCommand)
        #expect(list.ifStore == nil)
        let reset = try #require(
            try Self.registry.make(Self.parsed(["reset", "--if-store", "abc"])) as? ResetCommand)
        #expect(reset.ifStore == "abc")
    }
}
