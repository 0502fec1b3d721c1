import Testing

@testable import ArgumentParsing

/// The completion scripts come from the specs: each subcommand, each option (built-in ones too),
/// allowed values and file names where the value is a file, quoted for each shell.
@Suite struct CompletionTests {
    static let bash = Fixture.parser.completionScript(for: .bash)
    static let zsh = Fixture.parser.completionScript(for: .zsh)
    static let fish = Fixture.parser.completionScript(for: .fish)

    @Test func bashOffersTheSubcommandsAndEachOnesOptions() {
        #expect(Self.bash.hasSuffix("complete -F _countries countries\n"))
        #expect(
            Self.bash.contains(
                "_countries_words serve toggle set events on-change help --version --help -h\n"))
        #expect(Self.bash.contains("    help)\n        _countries_words serve toggle set events on-change\n"))
        #expect(
            Self.bash.contains(
                "_countries_words --db --in-memory --log-level --tag --help -h\n"))
    }

    @Test func bashCompletesValuesAfterTheOptionsThatTakeThem() {
        #expect(Self.bash.contains("--db) _countries_files; return 0 ;;"))
        #expect(Self.bash.contains("--log-level) _countries_words debug info warning error; return 0 ;;"))
        // A value with nothing to offer: no options offered in its place either.
        #expect(Self.bash.contains("--command | --timeout | -t) return 0 ;;"))
    }

    @Test func bashCompletesTheCommandAfterDashDashForTrailingArguments() {
        let onChange = Self.bash.components(after: "    on-change)\n")
        #expect(onChange.hasPrefix("        if ((dashdash)); then\n"))
        #expect(onChange.contains("compgen -c -- \"$cur\""))
        #expect(Self.bash.components(after: "    serve)\n").hasPrefix("        ((dashdash)) && return 0\n"))
    }

    @Test func zshHasOneFunctionPerSubcommandWithArgumentsSpecs() {
        #expect(Self.zsh.hasPrefix("#compdef countries\n"))
        #expect(Self.zsh.hasSuffix("_countries \"$@\"\n"))
        #expect(Self.zsh.contains("        on-change) _countries_on_change ;;\n"))
        #expect(Self.zsh.contains("'--db[The SQLite database file.]:path:_files'"))
        #expect(Self.zsh.contains("'*--tag[A tag; may repeat.]:tag:'"))
        #expect(Self.zsh.contains("'--log-level[How much to log.]:level:(debug info warning error)'"))
        #expect(Self.zsh.contains("'(--timeout -t)'{'--timeout','-t'}'[How long to wait for a reply.]:ms:'"))
        #expect(Self.zsh.contains("'(- *)'{'--help','-h'}'[Show help information.]'"))
        #expect(Self.zsh.contains("'*:target:'"))
        #expect(Self.zsh.contains("'::filter:'"))
        #expect(Self.zsh.contains("'serve:Run the service.'"))
    }

    @Test func zshEscapesWhatItsSpecsGiveAMeaning() {
        let option = OptionSpec(name: "odd", valueName: "x", help: "Brackets [a]: b's \\ value.")
        let parser = CommandLineParser(
            root: CommandSpec(
                name: "tool", abstract: "",
                subcommands: [CommandSpec(name: "go", abstract: "It's: here.", options: [option])]),
            version: "1")
        let script = parser.completionScript(for: .zsh)
        #expect(script.contains(#"'--odd[Brackets \[a\]\: b'\''s \\ value.]:x:'"#))
        #expect(script.contains(#"'go:It'\''s: here.'"#))
    }

    @Test func fishHasOneLinePerSubcommandAndOption() {
        #expect(Self.fish.contains("complete -c countries -f\n"))
        #expect(
            Self.fish.contains(
                "complete -c countries -n __fish_use_subcommand -a 'toggle' -d 'Toggle the visited flag of one or more countries.'\n"
            ))
        #expect(
            Self.fish.contains(
                "complete -c countries -n '__fish_seen_subcommand_from serve' -l db -r -F -d 'The SQLite database file.'\n"
            ))
        #expect(
            Self.fish.contains(
                "complete -c countries -n '__fish_seen_subcommand_from serve' -l log-level -x -a 'debug info warning error' -d 'How much to log.'\n"
            ))
        #expect(
            Self.fish.contains(
                "complete -c countries -n '__fish_seen_subcommand_from toggle' -l timeout -s t -x -d 'How long to wait for a reply.'\n"
            ))
        #expect(
            Self.fish.contains(
                "-n '__fish_seen_subcommand_from help' -a 'serve toggle set events on-change'\n"))
        #expect(fishQuoted("b's \\") == #"'b\'s \\'"#)
    }

    @Test func descriptionsAreTheHelpsFirstSentence() {
        #expect(firstSentence("One. Two.") == "One.")
        #expect(firstSentence("One.") == "One.")
        #expect(firstSentence("Per 1.5 s, e.g. this") == "Per 1.5 s, e.g. this")
        #expect(shellIdentifier("on-change") == "on_change")
    }
}

extension String {
    /// What follows the first `marker`, or "" when there is none.
    fileprivate func components(after marker: String) -> String {
        guard let range = firstRange(of: marker) else { return "" }
        return String(self[range.upperBound...])
    }
}
