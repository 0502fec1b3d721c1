import TestSupport
import Testing

/// Help, version and usage errors: no service needed.
@Suite struct HelpAndUsageTests {
    @Test func rootHelpListsEverySubcommand() throws {
        let result = try Countries.run(["--help"])
        #expect(result.exitCode == 0, "\(result)")
        for heading in ["OVERVIEW:", "USAGE: countries <subcommand>", "OPTIONS:", "SUBCOMMANDS:"] {
            #expect(result.stdout.contains(heading), "\(heading) missing: \(result)")
        }
        for name in [
            "serve", "list", "get", "count", "toggle", "set", "add", "remove", "reset", "history", "status",
            "events",
        ] {
            #expect(result.stdout.contains("\n  \(name) "), "\(name) missing: \(result)")
        }
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: [["help", "toggle"], ["toggle", "--help"], ["toggle", "-h"]])
    func subcommandHelp(_ arguments: [String]) throws {
        let result = try Countries.run(arguments)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("OVERVIEW: Flip the visited flag of one or more countries."))
        #expect(result.stdout.contains("USAGE: countries toggle <target> ..."))
        #expect(result.stdout.contains("ARGUMENTS:"))
        #expect(result.stdout.contains("OPTIONS:"))
        #expect(result.stdout.contains("--command <endpoint>"))
        #expect(result.stdout.contains("env: COUNTRIES_COMMAND"))
        #expect(result.stderr.isEmpty)
    }

    @Test func helpAndToggleHelpAreTheSame() throws {
        let viaHelp = try Countries.run(["help", "toggle"])
        let viaFlag = try Countries.run(["toggle", "--help"])
        #expect(viaHelp.stdout == viaFlag.stdout)
    }

    @Test func serveHelpShowsItsOptions() throws {
        let result = try Countries.run(["serve", "--help"])
        #expect(result.exitCode == 0, "\(result)")
        for option in ["--db <path>", "--in-memory", "--seed <list>", "--heartbeat-ms <ms>", "--log-level"] {
            #expect(result.stdout.contains(option), "\(option) missing: \(result)")
        }
    }

    @Test func version() throws {
        let result = try Countries.run(["--version"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout == "0.1.0\n")
    }

    struct UsageCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var message: String
        var helpLine: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    @Test(arguments: [
        UsageCase(
            arguments: ["list", "--bogus"], message: "Error: Unknown option '--bogus'",
            helpLine: "See 'countries list --help' for more information."),
        UsageCase(
            arguments: ["toggle"], message: "Error: Missing expected argument '<target>'",
            helpLine: "See 'countries toggle --help' for more information."),
        UsageCase(
            arguments: ["get"], message: "Error: Missing expected argument '<target>'",
            helpLine: "See 'countries get --help' for more information."),
        UsageCase(
            arguments: ["set", "1", "--visited", "maybe"],
            message: "Error: The value 'maybe' is invalid for '--visited <bool>'",
            helpLine: "See 'countries set --help' for more information."),
        UsageCase(
            arguments: ["set", "1"], message: "Error: Missing expected argument '--visited <bool>'",
            helpLine: "See 'countries set --help' for more information."),
        UsageCase(
            arguments: ["count", "--timeout", "0"], message: "Error: --timeout must be a positive number",
            helpLine: "See 'countries count --help' for more information."),
        UsageCase(
            arguments: ["count", "--retries", "0"], message: "Error: --retries must be at least 1",
            helpLine: "See 'countries count --help' for more information."),
        UsageCase(
            arguments: ["serve", "--heartbeat-ms", "1"], message: "Error: --heartbeat-ms must be between",
            helpLine: "See 'countries serve --help' for more information."),
        UsageCase(
            arguments: ["events", "--count", "0"], message: "Error: --count must be at least 1",
            helpLine: "See 'countries events --help' for more information."),
        UsageCase(
            arguments: ["frobnicate"], message: "Error:",
            helpLine: "See 'countries --help' for more information."),
    ])
    func usageErrorsExit64(_ usage: UsageCase) throws {
        // A dead endpoint: a usage error must be reported before anything is sent.
        let result = try Countries.run(
            usage.arguments, environment: ["COUNTRIES_COMMAND": "ipc:///nonexistent/countries-e2e"])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.hasPrefix(usage.message), "\(result)")
        #expect(result.stderr.contains("\nUsage: countries"), "\(result)")
        #expect(result.stderr.contains(usage.helpLine), "\(result)")
    }
}
