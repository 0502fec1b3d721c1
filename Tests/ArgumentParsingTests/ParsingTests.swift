import Testing

@testable import ArgumentParsing

@Suite struct ParsingTests {
    @Test func subcommandPathAndRepeatingArgument() throws {
        let command = try Fixture.run(["toggle", "0", "France", "12"])
        #expect(command.path == ["countries", "toggle"])
        #expect(command.arguments("target") == ["0", "France", "12"])
        #expect(command.argument("target") == "0")
        #expect(command.flag("json") == false)
        #expect(command.trailing.isEmpty)
    }

    @Test func optionsBeforeAndAfterPositionals() throws {
        let before = try Fixture.run(["toggle", "--json", "--timeout", "50", "1", "2"])
        let after = try Fixture.run(["toggle", "1", "2", "--json", "--timeout", "50"])
        let between = try Fixture.run(["toggle", "1", "--json", "2", "--timeout", "50"])
        for command in [before, after, between] {
            #expect(command.arguments("target") == ["1", "2"])
            #expect(command.flag("json"))
            #expect(try command.int("timeout") == 50)
        }
    }

    @Test func equalsAndSeparateValuesAndShortNames() throws {
        #expect(try Fixture.run(["toggle", "1", "--timeout=7"]).int("timeout") == 7)
        #expect(try Fixture.run(["toggle", "1", "--timeout", "7"]).int("timeout") == 7)
        #expect(try Fixture.run(["toggle", "1", "-t", "7"]).int("timeout") == 7)
        #expect(try Fixture.run(["toggle", "1", "--command=tcp://h:1"]).value("command") == "tcp://h:1")
        #expect(try Fixture.run(["toggle", "1", "--command=a=b"]).value("command") == "a=b")
        #expect(try Fixture.run(["toggle", "1", "--command="]).value("command") == "")
    }

    @Test func argumentsThatAreNotUTF8AreUsageErrorsOfTheirCommand() throws {
        let valid = try Fixture.parser.parse(
            bytes: [Array("toggle".utf8), Array("Côte".utf8)], environment: [:])
        guard case .run(let command) = valid else {
            Issue.record("\(valid)")
            return
        }
        #expect(command.argument("target") == "Côte")

        let latin1: [UInt8] = [0x46, 0x72, 0xE9, 0x6E, 0x63, 0x65]  // "Française" in Latin-1, cut
        let error = #expect(throws: UsageError.self) {
            try Fixture.parser.parse(
                bytes: [Array("toggle".utf8), Array("1".utf8), latin1], environment: [:])
        }
        #expect(error?.message.hasPrefix("argument 3 (Fr\\xE9nce) is not valid UTF-8") == true)
        #expect(error?.commandPath == ["countries", "toggle"])
        // Before any subcommand: the root's usage.
        let early = #expect(throws: UsageError.self) {
            try Fixture.parser.parse(bytes: [[0xFF]], environment: [:])
        }
        #expect(early?.message.hasPrefix("argument 1 (\\xFF) is not valid UTF-8") == true)
        #expect(early?.commandPath == ["countries"])
        // A truncated sequence, an overlong form and a surrogate are each invalid bytes.
        #expect(CommandLineParser.escapingInvalidUTF8([0x61, 0xC3]) == "a\\xC3")
        #expect(CommandLineParser.escapingInvalidUTF8([0xC0, 0xAF, 0x62]) == "\\xC0\\xAF" + "b")
        #expect(CommandLineParser.escapingInvalidUTF8([0xED, 0xA0, 0x80]).hasPrefix("\\xED"))
        // A long argument is cut in the message.
        let long = CommandLineParser.escapingInvalidUTF8(Array(repeating: 0x61, count: 10_000) + [0xFF])
        #expect(long.count == 61 && long.hasSuffix("…"))
    }

    @Test func negativeNumbersAndDashAreValues() throws {
        #expect(try Fixture.run(["events", "--since", "-1"]).int("since") == -1)
        #expect(try Fixture.run(["events", "-"]).argument("filter") == "-")
    }

    @Test func lastValueWinsAndRepeatingOptionsCollect() throws {
        #expect(try Fixture.run(["toggle", "1", "-t", "1", "--timeout", "2"]).int("timeout") == 2)
        let serve = try Fixture.run(["serve", "--tag", "a", "--tag=b"])
        #expect(serve.values("tag") == ["a", "b"])
        #expect(try Fixture.run(["serve"]).values("tag") == [])
        #expect(try Fixture.run(["serve"]).values("log-level") == ["info"])
    }

    @Test func defaultsAndMissingValues() throws {
        let command = try Fixture.run(["toggle", "1"])
        #expect(command.value("command") == "tcp://127.0.0.1:5555")
        #expect(try command.int("timeout") == 2000)
        #expect(try Fixture.run(["events"]).argument("filter") == nil)
        #expect(try Fixture.run(["events"]).int("since") == nil)
        #expect(try Fixture.run(["serve"]).value("db") == nil)
    }

    @Test func environmentSitsBetweenFlagAndDefault() throws {
        let environment = ["COUNTRIES_COMMAND": "tcp://env:1"]
        #expect(try Fixture.run(["toggle", "1"]).value("command") == "tcp://127.0.0.1:5555")
        #expect(try Fixture.run(["toggle", "1"], environment: environment).value("command") == "tcp://env:1")
        let explicit = try Fixture.run(
            ["toggle", "1", "--command", "tcp://flag:1"], environment: environment)
        #expect(explicit.value("command") == "tcp://flag:1")
        let empty = try Fixture.run(["toggle", "1"], environment: ["COUNTRIES_COMMAND": ""])
        #expect(empty.value("command") == "tcp://127.0.0.1:5555")
    }

    @Test func environmentSatisfiesRequiredOptionsAndSetsFlags() throws {
        #expect(
            try Fixture.run(["serve"], environment: ["COUNTRIES_DB": "/tmp/x.db"]).value("db") == "/tmp/x.db")
        #expect(try Fixture.run(["events"], environment: ["COUNTRIES_JSON": "1"]).flag("json"))
        #expect(try Fixture.run(["events"], environment: ["COUNTRIES_JSON": "no"]).flag("json") == false)
        #expect(try Fixture.run(["events", "--json"], environment: ["COUNTRIES_JSON": "no"]).flag("json"))
    }

    /// A repeating option's variable gives one value when the command line gives none; an
    /// error about a value from the environment names the variable, one about a value typed
    /// does not.
    @Test func repeatingOptionsAndErrorsFromTheEnvironment() throws {
        let run = CommandSpec(
            name: "run", abstract: "",
            options: [
                OptionSpec(
                    name: "allow", valueName: "dir", help: "", environment: "TOOL_ALLOW", isRepeating: true)
            ])
        let parser = CommandLineParser(
            root: CommandSpec(name: "tool", abstract: "", subcommands: [run]), version: "1")
        guard case .run(let fromEnvironment) = try parser.parse(["run"], environment: ["TOOL_ALLOW": "/a"]),
            case .run(let typed) = try parser.parse(
                ["run", "--allow", "/b", "--allow", "/c"], environment: ["TOOL_ALLOW": "/a"])
        else {
            Issue.record("run did not parse")
            return
        }
        #expect(fromEnvironment.values("allow") == ["/a"])
        #expect(typed.values("allow") == ["/b", "/c"])
        #expect(fromEnvironment.source("allow") == .environment("TOOL_ALLOW"))
        #expect(typed.source("allow") == .commandLine)
        let bad = fromEnvironment.usageError("--allow /a is no directory")
        #expect(
            fromEnvironment.namingTheEnvironment(in: bad, for: "--allow").message
                == "--allow /a is no directory (the value of TOOL_ALLOW)")
        #expect(typed.namingTheEnvironment(in: bad, for: "--allow").message == "--allow /a is no directory")
    }

    @Test func boolValues() throws {
        #expect(try Fixture.run(["set", "1", "--visited", "false"]).bool("visited") == false)
        let parser = CommandLineParser(
            root: CommandSpec(
                name: "tool", abstract: "A tool.",
                options: [OptionSpec(name: "on", valueName: "bool", help: "On or off.")]),
            version: "1")
        let cases = [
            ("true", true), ("FALSE", false), ("yes", true), ("No", false), ("1", true), ("0", false),
        ]
        for (text, expected) in cases {
            guard case .run(let command) = try parser.parse(["--on", text], environment: [:]) else {
                Issue.record("Expected .run")
                return
            }
            #expect(try command.bool("on") == expected)
        }
    }

    @Test func doubleDashEndsOptionsAndGathersTrailingArguments() throws {
        let onChange = try Fixture.run(["on-change", "--initial", "--", "ls", "-l", "--", "--help"])
        #expect(onChange.flag("initial"))
        #expect(onChange.trailing == ["ls", "-l", "--", "--help"])
        #expect(try Fixture.run(["on-change"]).trailing == [])

        // Without trailing arguments, `--` only stops option parsing.
        let toggle = try Fixture.run(["toggle", "1", "--", "--json", "-t"])
        #expect(toggle.arguments("target") == ["1", "--json", "-t"])
        #expect(toggle.flag("json") == false)
        #expect(toggle.trailing == [])
    }

    @Test func usageErrorFromParsedCommand() throws {
        let error = try Fixture.run(["on-change"]).usageError("Missing the command to run after '--'")
        #expect(error.commandPath == ["countries", "on-change"])
        #expect(
            error.description == """
                Error: Missing the command to run after '--'
                Usage: countries on-change [--initial] -- <command> ...
                  See 'countries on-change --help' for more information.
                """)
    }

    @Test func version() throws {
        guard case .version = try Fixture.parser.parse(["--version"], environment: [:]) else {
            Issue.record("Expected .version")
            return
        }
        #expect(Fixture.parser.version == "1.2.3")
    }

    /// A root without subcommands (countries-bench) lists `--version` in its help and answers
    /// it; a subcommand does not, and after `--` it is an argument.
    @Test func versionOfALeafRoot() throws {
        let leaf = CommandLineParser(
            root: CommandSpec(
                name: "tool", abstract: "",
                arguments: [ArgumentSpec(name: "file", help: "", isRepeating: true, isOptional: true)],
                options: [.flag("quick", help: "")]),
            version: "2")
        guard case .version = try leaf.parse(["--quick", "--version"], environment: [:]) else {
            Issue.record("Expected .version")
            return
        }
        #expect(leaf.helpText(for: ["tool"]).contains("--version"))
        guard case .run(let parsed) = try leaf.parse(["--", "--version"], environment: [:]) else {
            Issue.record("Expected .run")
            return
        }
        #expect(parsed.arguments("file") == ["--version"])
        #expect(throws: UsageError.self) {
            try Fixture.parser.parse(["toggle", "--version"], environment: [:])
        }
    }

    @Test(arguments: [
        ["--help"], ["-h"], [], ["help"], ["help", "--help"],
    ])
    func rootHelp(arguments: [String]) throws {
        #expect(try Fixture.help(arguments) == Fixture.parser.helpText(for: ["countries"]))
    }

    @Test(arguments: [
        ["help", "toggle"], ["toggle", "--help"], ["toggle", "-h"], ["toggle", "1", "--bogus", "-h"],
    ])
    func subcommandHelp(arguments: [String]) throws {
        #expect(try Fixture.help(arguments) == Fixture.parser.helpText(for: ["countries", "toggle"]))
    }

    @Test func helpAfterDoubleDashIsPassedThrough() throws {
        #expect(try Fixture.run(["on-change", "--", "cat", "--help"]).trailing == ["cat", "--help"])
    }

    @Test func nestedSubcommands() throws {
        let database = CommandSpec(
            name: "db", abstract: "Manage the database.",
            subcommands: [CommandSpec(name: "migrate", abstract: "Migrate it.")])
        let parser = CommandLineParser(
            root: CommandSpec(name: "tool", abstract: "A tool.", subcommands: [database]), version: "1")
        guard case .run(let command) = try parser.parse(["db", "migrate"], environment: [:]) else {
            Issue.record("Expected .run")
            return
        }
        #expect(command.path == ["tool", "db", "migrate"])
        guard case .help(let text) = try parser.parse(["db"], environment: [:]) else {
            Issue.record("Expected .help")
            return
        }
        #expect(text == parser.helpText(for: ["tool", "db"]))
        #expect(text.hasSuffix("  See 'tool help db <subcommand>' for detailed help."))
        guard case .help(let migrateHelp) = try parser.parse(["help", "db", "migrate"], environment: [:])
        else {
            Issue.record("Expected .help")
            return
        }
        #expect(migrateHelp.hasPrefix("OVERVIEW: Migrate it.\n\nUSAGE: tool db migrate\n"))
    }
}

@Suite struct ErrorTests {
    /// The message of the usage error for `arguments`.
    private func message(_ arguments: [String], environment: [String: String] = [:]) -> String? {
        Fixture.error(arguments, environment: environment)?.message
    }

    @Test func fullDescription() throws {
        let error = try #require(Fixture.error(["toggle"]))
        #expect(error.commandPath == ["countries", "toggle"])
        #expect(
            error.description == """
                Error: Missing expected argument '<target>'
                Usage: countries toggle <target> ... [--json] [--command <endpoint>] [--timeout <ms>]
                  See 'countries toggle --help' for more information.
                """)
    }

    @Test func unknownOption() {
        #expect(message(["toggle", "1", "--foo"]) == "Unknown option '--foo'")
        #expect(message(["toggle", "1", "--foo=3"]) == "Unknown option '--foo'")
        #expect(message(["toggle", "1", "-x"]) == "Unknown option '-x'")
        #expect(message(["toggle", "1", "--jsn"]) == "Unknown option '--jsn'. Did you mean '--json'?")
        #expect(message(["toggle", "1", "--version"]) == "Unknown option '--version'")
        #expect(message(["--foo"]) == "Unknown option '--foo'")
        #expect(message(["--verison"]) == "Unknown option '--verison'. Did you mean '--version'?")
    }

    @Test func missingValue() {
        #expect(message(["toggle", "1", "--timeout"]) == "Missing value for '--timeout <ms>'")
        #expect(message(["toggle", "1", "-t"]) == "Missing value for '-t <ms>'")
        #expect(message(["toggle", "1", "--timeout", "--json"]) == "Missing value for '--timeout <ms>'")
        #expect(message(["toggle", "1", "--timeout", "--"]) == "Missing value for '--timeout <ms>'")
    }

    @Test func missingArgumentAndRequiredOption() {
        #expect(message(["toggle"]) == "Missing expected argument '<target>'")
        #expect(message(["toggle", "--json"]) == "Missing expected argument '<target>'")
        #expect(message(["set", "--visited", "true"]) == "Missing expected argument '<target>'")
        #expect(message(["set", "1"]) == "Missing expected argument '--visited <bool>'")
    }

    @Test func unexpectedArguments() {
        #expect(message(["set", "1", "x", "--visited", "true"]) == "Unexpected argument 'x'")
        #expect(message(["set", "1", "x", "y", "--visited", "true"]) == "2 unexpected arguments: 'x', 'y'")
        #expect(message(["on-change", "ls"]) == "Unexpected argument 'ls'")
        #expect(message(["help", "toggle", "extra"]) == "Unexpected argument 'extra'")
    }

    @Test func valueNotAllowed() {
        #expect(
            message(["set", "1", "--visited", "maybe"])
                == "The value 'maybe' is invalid for '--visited <bool>'. Please provide one of 'true' and 'false'."
        )
        #expect(
            message(["serve", "--log-level=loud"])
                == "The value 'loud' is invalid for '--log-level <level>'. "
                + "Please provide one of 'debug', 'info', 'warning' or 'error'.")
    }

    @Test func invalidEnvironmentValue() {
        #expect(
            message(["events"], environment: ["COUNTRIES_JSON": "maybe"])
                == "The value 'maybe' of COUNTRIES_JSON is invalid for '--json'. "
                + "Please provide one of 'true' and 'false' ('yes' and 'no', '1' and '0').")
    }

    @Test func invalidEnvironmentValueIsIgnoredWhenTheOptionIsGiven() throws {
        #expect(try Fixture.run(["events", "--json"], environment: ["COUNTRIES_JSON": "maybe"]).flag("json"))
        let serve = try Fixture.run(["serve", "--db", "/tmp/x.db"], environment: ["COUNTRIES_DB": ""])
        #expect(serve.value("db") == "/tmp/x.db")
    }

    @Test func invalidNumbersAndBooleans() throws {
        let command = try Fixture.run(["toggle", "1", "--timeout", "abc"])
        #expect(throws: UsageError.self) { try command.int("timeout") }
        do {
            _ = try command.int("timeout")
        } catch {
            #expect(error.message == "The value 'abc' is invalid for '--timeout <ms>'")
            #expect(error.commandPath == ["countries", "toggle"])
        }
        let events = try Fixture.run(["events", "--since", "perhaps"])
        #expect(throws: UsageError.self) { try events.bool("since") }
    }

    @Test func flagGivenAValue() {
        #expect(
            message(["toggle", "1", "--json=x"])
                == "The option '--json' does not take any value, but 'x' was specified.")
    }

    @Test func unknownSubcommand() throws {
        #expect(message(["tggle"]) == "Unknown subcommand 'tggle'. Did you mean 'toggle'?")
        #expect(message(["frobnicate"]) == "Unknown subcommand 'frobnicate'")
        #expect(message(["help", "evnts"]) == "Unknown subcommand 'evnts'. Did you mean 'events'?")
        let error = try #require(Fixture.error(["nope"]))
        #expect(
            error.description == """
                Error: Unknown subcommand 'nope'
                Usage: countries <subcommand>
                  See 'countries --help' for more information.
                """)
    }
}
