import ArgumentParsing
import Testing

@testable import CountriesCommands

/// Every option can be set from the environment (issue 24): `COUNTRIES_<OPTION>`, named in
/// `--help`, the command line winning, a bad value a usage error that names the variable.
@Suite struct EnvironmentOptionsTests {
    /// Options that describe one request or one run rather than how to reach or run the service:
    /// left in the environment they would act on every later command (a `COUNTRIES_ID` would
    /// make every change after the first a reuse of its id), so they have no variable.
    static let perRequest: Set<String> = ["id", "if-seq", "if-store", "visited", "since", "force"]

    /// Options whose variable is not `COUNTRIES_<OPTION>`, and why: the relay's upstream is an
    /// event endpoint, the same one clients give as --events.
    static let otherNames: [String: String] = ["relay --from": "COUNTRIES_EVENTS"]

    static let parser = CommandLineParser(root: CountriesCommandLine.root, version: "test")

    /// `COUNTRIES_` and the option's name in capitals, dashes as underscores.
    static func variable(for option: String) -> String {
        "COUNTRIES_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    @Test(arguments: CountriesCommandLine.root.subcommands.map(\.name))
    func everyOptionHasItsVariableNamedInHelp(_ name: String) throws {
        let spec = try #require(CountriesCommandLine.root.subcommands.first { $0.name == name })
        let help = Self.parser.helpText(for: ["countries", name])
        // The help wraps lines: compare it with its line breaks and indents taken out.
        let flatHelp = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for option in spec.options {
            if Self.perRequest.contains(option.name) {
                #expect(option.environment == nil, "\(name) --\(option.name) is per request")
                continue
            }
            let expected = Self.otherNames["\(name) --\(option.name)"] ?? Self.variable(for: option.name)
            #expect(option.environment == expected, "\(name) --\(option.name)")
            #expect(flatHelp.contains("env: \(expected))"), "\(name) --help does not name \(expected)")
        }
    }

    /// The command line wins over the environment; the environment wins over the default.
    @Test func theCommandLineWinsOverTheEnvironment() throws {
        let environment = ["COUNTRIES_TIMEOUT": "700", "COUNTRIES_RETRIES": "4", "COUNTRIES_JSON": "1"]
        guard case .run(let fromEnvironment) = try Self.parser.parse(["count"], environment: environment),
            case .run(let explicit) = try Self.parser.parse(
                ["count", "--timeout", "300", "--retries", "2"], environment: environment)
        else {
            Issue.record("count did not parse")
            return
        }
        #expect(try fromEnvironment.int("timeout") == 700 && fromEnvironment.int("retries") == 4)
        #expect(fromEnvironment.flag("json"))
        #expect(try explicit.int("timeout") == 300 && explicit.int("retries") == 2)
        #expect(explicit.source("timeout") == .commandLine)
        #expect(fromEnvironment.source("timeout") == .environment("COUNTRIES_TIMEOUT"))
    }

    /// A value the option refuses is a usage error that names the variable it came from.
    @Test(arguments: [
        (
            ["count"], ["COUNTRIES_TIMEOUT": "soon"],
            "The value 'soon' is invalid for '--timeout <ms>' (the value of COUNTRIES_TIMEOUT)"
        ),
        (
            ["count"], ["COUNTRIES_RETRIES": "0"],
            "--retries must be at least 1 (the value of COUNTRIES_RETRIES)"
        ),
        (["count"], ["COUNTRIES_COMMAND": "127.0.0.1:5555"], "(the value of COUNTRIES_COMMAND)"),
        (["serve"], ["COUNTRIES_LOG_LEVEL": "loud"], "The value 'loud' of COUNTRIES_LOG_LEVEL is invalid"),
        (["events"], ["COUNTRIES_COUNT": "-1"], "--count must be at least 1 (the value of COUNTRIES_COUNT)"),
        (["serve"], ["COUNTRIES_IN_MEMORY": "maybe"], "The value 'maybe' of COUNTRIES_IN_MEMORY is invalid"),
    ])
    func aBadValueNamesItsVariable(arguments: [String], environment: [String: String], message: String) {
        #expect {
            guard case .run(let parsed) = try Self.parser.parse(arguments, environment: environment) else {
                return
            }
            _ = try CountriesCommandLine.registry.make(parsed)
        } throws: { error in
            (error as? UsageError)?.message.contains(message) == true
        }
    }

    /// `--in-memory` with `--db` names two stores: a usage error when both come from the same
    /// place; a command-line one wins over one from the environment.
    @Test func inMemoryAndADatabaseAreOneChoice() throws {
        func inMemory(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Bool {
            guard
                case .run(let parsed) = try Self.parser.parse(["serve"] + arguments, environment: environment)
            else { throw UsageError(message: "no run", commandPath: [], usage: "") }
            return try #require(try CountriesCommandLine.registry.make(parsed) as? ServeCommand).command
                .inMemory()
        }
        #expect(try inMemory([]) == false)
        #expect(try inMemory(["--in-memory"]))
        #expect(try inMemory(["--in-memory"], ["COUNTRIES_DB": "/srv/countries.db"]))
        #expect(try inMemory(["--db", "a.db"], ["COUNTRIES_IN_MEMORY": "1"]) == false)
        #expect(try inMemory(["--db", "a.db"], ["COUNTRIES_IN_MEMORY": "0"]) == false)
        #expect {
            try inMemory(["--db", "a.db", "--in-memory"])
        } throws: { error in
            (error as? UsageError)?.message == "--in-memory and --db are two different stores; give one"
        }
        #expect {
            try inMemory([], ["COUNTRIES_DB": "a.db", "COUNTRIES_IN_MEMORY": "true"])
        } throws: { error in
            (error as? UsageError)?.message
                == "COUNTRIES_IN_MEMORY (--in-memory) and COUNTRIES_DB (--db) are two different stores; give one"
        }
    }
}
