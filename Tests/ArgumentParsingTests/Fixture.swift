import ArgumentParsing
import Testing

/// A command tree shaped like the `countries` executable's.
enum Fixture {
    static let clientOptions: [OptionSpec] = [
        OptionSpec(
            name: "command", valueName: "endpoint", help: "The service's command endpoint.",
            defaultValue: "tcp://127.0.0.1:5555", environment: "COUNTRIES_COMMAND"),
        OptionSpec(
            name: "timeout", short: "t", valueName: "ms", help: "How long to wait for a reply.",
            defaultValue: "2000"),
    ]

    static let serve = CommandSpec(
        name: "serve",
        abstract: "Run the service.",
        options: [
            OptionSpec(
                name: "db", valueName: "path", help: "The SQLite database file.", environment: "COUNTRIES_DB"),
            .flag("in-memory", help: "Keep the database in memory only."),
            OptionSpec(
                name: "log-level", valueName: "level", help: "How much to log.", defaultValue: "info",
                allowedValues: ["debug", "info", "warning", "error"]),
            OptionSpec(name: "tag", valueName: "tag", help: "A tag; may repeat.", isRepeating: true),
        ])

    static let toggle = CommandSpec(
        name: "toggle",
        abstract: "Toggle the visited flag of one or more countries.",
        arguments: [
            ArgumentSpec(name: "target", help: "The index (0-based) or name of a country.", isRepeating: true)
        ],
        options: [.flag("json", help: "Print the service's JSON reply.")] + clientOptions)

    static let set = CommandSpec(
        name: "set",
        abstract: "Set the visited flag of one country.",
        discussion: "Unlike toggle, set is idempotent: running it twice leaves the same state.",
        arguments: [ArgumentSpec(name: "target", help: "The index (0-based) or name of a country.")],
        options: [
            OptionSpec(
                name: "visited", valueName: "bool", help: "The new value.", allowedValues: ["true", "false"],
                isRequired: true)
        ] + clientOptions)

    static let events = CommandSpec(
        name: "events",
        abstract: "Print change events.",
        arguments: [ArgumentSpec(name: "filter", help: "Only events for this country.", isOptional: true)],
        options: [
            OptionSpec(name: "since", valueName: "seq", help: "The first sequence number."),
            .flag("json", help: "Print JSON.", environment: "COUNTRIES_JSON"),
        ])

    static let onChange = CommandSpec(
        name: "on-change",
        abstract: "Run a command after every change.",
        options: [.flag("initial", help: "Also run it once at start.")],
        acceptsTrailingArguments: true,
        trailingValueName: "command")

    static let root = CommandSpec(
        name: "countries",
        abstract: "Keep track of the countries you have visited.",
        subcommands: [serve, toggle, set, events, onChange])

    static let parser = CommandLineParser(root: root, version: "1.2.3")

    /// Parses and expects a command to run.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ParsedCommand {
        let outcome = try parser.parse(arguments, environment: environment)
        guard case .run(let command) = outcome else {
            Issue.record("Expected .run, got \(outcome)")
            throw Unexpected()
        }
        return command
    }

    /// Parses and expects help text.
    static func help(_ arguments: [String]) throws -> String {
        let outcome = try parser.parse(arguments, environment: [:])
        guard case .help(let text) = outcome else {
            Issue.record("Expected .help, got \(outcome)")
            throw Unexpected()
        }
        return text
    }

    /// Parses and expects a usage error.
    static func error(_ arguments: [String], environment: [String: String] = [:]) -> UsageError? {
        do {
            let outcome = try parser.parse(arguments, environment: environment)
            Issue.record("Expected an error, got \(outcome)")
            return nil
        } catch {
            return error
        }
    }

    struct Unexpected: Error {}
}
