import Testing

@testable import ArgumentParsing

/// The man page comes from the specs: every subcommand and option with the help's annotations,
/// in roff that no text can turn into a request.
@Suite struct ManPageTests {
    static let page = Fixture.parser.manPage()

    @Test func itIsSectionOneWithTheRootsNameAndVersion() {
        #expect(Self.page.contains(".TH COUNTRIES 1 \"\" \"countries 1.2.3\" \"User Commands\"\n"))
        #expect(Self.page.contains(".SH NAME\ncountries \\- Keep track of the countries you have visited.\n"))
    }

    @Test func everySubcommandHasASubsectionWithItsUsageAndOptions() {
        for command in Fixture.root.subcommands {
            #expect(Self.page.contains(".SS \"countries \(roffEscaped(command.name))\"\n"))
            for option in command.options {
                #expect(Self.page.contains("\\fB\\-\\-\(roffEscaped(option.name))\\fR"), "\(option.name)")
            }
        }
        #expect(
            Self.page.contains(
                ".TP\n\\fB\\-\\-log\\-level\\fR \\fI<level>\\fR\nHow much to log. (values: debug, info, warning, error; default: info)\n"
            ))
        #expect(Self.page.contains(".TP\n\\fB\\-t\\fR, \\fB\\-\\-timeout\\fR \\fI<ms>\\fR\n"))
        #expect(Self.page.contains(".B countries toggle\n<target> ... [\\-\\-json]"))
    }

    @Test func theEnvironmentSectionNamesWhatEachVariableSets() {
        #expect(
            Self.page.contains(
                ".SH ENVIRONMENT\n.TP\n.B COUNTRIES_DB\nSets \\-\\-db (serve).\n"))
        #expect(Self.page.contains(".B COUNTRIES_COMMAND\nSets \\-\\-command (toggle, set).\n"))
    }

    @Test func textCannotBecomeARequest() {
        #expect(roffEscaped(".so /etc/passwd") == "\\&.so /etc/passwd")
        #expect(roffEscaped("'br") == "\\&'br")
        #expect(roffEscaped("a\\fB-b") == "a\\efB\\-b")
    }
}
