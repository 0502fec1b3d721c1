import ArgumentParsing
import Testing

@Suite struct HelpTests {
    @Test func rootWithSubcommands() {
        #expect(
            Fixture.parser.helpText(for: ["countries"]) == """
                OVERVIEW: Keep track of the countries you have visited.

                USAGE: countries <subcommand>

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.

                SUBCOMMANDS:
                  serve                   Run the service.
                  toggle                  Toggle the visited flag of one or more countries.
                  set                     Set the visited flag of one country.
                  events                  Print change events.
                  on-change               Run a command after every change.

                  See 'countries help <subcommand>' for detailed help.
                """)
    }

    @Test func optionsWithASectionAreListedUnderItsOwnHeading() {
        let list = CommandSpec(
            name: "list", abstract: "Print the list.",
            options: [
                .flag("json", help: "Print JSON."),
                OptionSpec(
                    name: "command", valueName: "endpoint", help: "The command endpoint.",
                    section: "CONNECTION OPTIONS"),
                OptionSpec(
                    name: "events", valueName: "endpoint", help: "Unused here.", section: "CONNECTION OPTIONS"
                ),
            ])
        let parser = CommandLineParser(
            root: CommandSpec(name: "countries", abstract: "", subcommands: [list]), version: "1")
        #expect(
            parser.helpText(for: ["countries", "list"]) == """
                OVERVIEW: Print the list.

                USAGE: countries list [--json] [--command <endpoint>] [--events <endpoint>]

                OPTIONS:
                  --json                  Print JSON.
                  -h, --help              Show help information.

                CONNECTION OPTIONS:
                  --command <endpoint>    The command endpoint.
                  --events <endpoint>     Unused here.
                """)
    }

    @Test func leafWithRepeatingArgumentAndWrappedAnnotation() {
        #expect(
            Fixture.parser.helpText(for: ["countries", "toggle"]) == """
                OVERVIEW: Toggle the visited flag of one or more countries.

                USAGE: countries toggle <target> ... [--json] [--command <endpoint>] [--timeout <ms>]

                ARGUMENTS:
                  <target>                The index (0-based) or name of a country.

                OPTIONS:
                  --json                  Print the service's JSON reply.
                  --command <endpoint>    The service's command endpoint. (default:
                                          tcp://127.0.0.1:5555, env: COUNTRIES_COMMAND)
                  -t, --timeout <ms>      How long to wait for a reply. (default: 2000)
                  -h, --help              Show help information.
                """)
    }

    @Test func leafWithDiscussionRequiredOptionAndAllowedValues() {
        #expect(
            Fixture.parser.helpText(for: ["countries", "set"]) == """
                OVERVIEW: Set the visited flag of one country.

                Unlike toggle, set is idempotent: running it twice leaves the same state.

                USAGE: countries set <target> --visited <bool> [--command <endpoint>] [--timeout <ms>]

                ARGUMENTS:
                  <target>                The index (0-based) or name of a country.

                OPTIONS:
                  --visited <bool>        The new value. (values: true, false)
                  --command <endpoint>    The service's command endpoint. (default:
                                          tcp://127.0.0.1:5555, env: COUNTRIES_COMMAND)
                  -t, --timeout <ms>      How long to wait for a reply. (default: 2000)
                  -h, --help              Show help information.
                """)
    }

    @Test func optionalArgumentsTrailingArgumentsAndRepeatingOptionsInUsage() {
        let events = Fixture.parser.helpText(for: ["countries", "events"])
        #expect(events.contains("\nUSAGE: countries events [<filter>] [--since <seq>] [--json]\n"))
        #expect(events.contains("\n  --json                  Print JSON. (env: COUNTRIES_JSON)\n"))
        let onChange = Fixture.parser.helpText(for: ["countries", "on-change"])
        #expect(onChange.contains("\nUSAGE: countries on-change [--initial] -- <command> ...\n"))
        let serve = Fixture.parser.helpText(for: ["countries", "serve"])
        #expect(serve.contains("[--log-level <level>] [--tag <tag> ...]\n"))
        #expect(
            serve.contains(
                """
                  --log-level <level>     How much to log. (values: debug, info, warning, error;
                                          default: info)
                """))
    }

    @Test func longLabelGetsItsOwnLineAndLongDiscussionWraps() {
        let command = CommandSpec(
            name: "serve",
            abstract: "Run the service.",
            discussion: String(repeating: "word ", count: 20) + "end.\n\nSecond paragraph.",
            options: [
                OptionSpec(name: "heartbeat-interval", valueName: "milliseconds", help: "How often to beat.")
            ])
        let parser = CommandLineParser(
            root: CommandSpec(name: "tool", abstract: "A tool.", subcommands: [command]), version: "1")
        #expect(
            parser.helpText(for: ["tool", "serve"]) == """
                OVERVIEW: Run the service.

                word word word word word word word word word word word word word word word word
                word word word word end.

                Second paragraph.

                USAGE: tool serve [--heartbeat-interval <milliseconds>]

                OPTIONS:
                  --heartbeat-interval <milliseconds>
                                          How often to beat.
                  -h, --help              Show help information.
                """)
    }

    @Test func unknownPathStopsAtTheDeepestMatch() {
        let root = Fixture.parser.helpText(for: ["countries"])
        #expect(Fixture.parser.helpText(for: []) == root)
        #expect(Fixture.parser.helpText(for: ["countries", "nope"]) == root)
        #expect(
            Fixture.parser.helpText(for: ["toggle"]) == Fixture.parser.helpText(for: ["countries", "toggle"]))
    }
}
