import ArgumentParsing

/// `countries completion SHELL`: prints the shell's completion script, made from the registry.
struct CompletionCommand: Subcommand {
    static let name = "completion"
    static let abstract = "Print the completion script for bash, zsh or fish."
    static let discussion: String? = """
        Made from the same declarations as --help. Load it in bash with: \
        source <(countries completion bash). scripts/install puts all three where the shells look.
        """
    static var options: Options { Options() }

    /// The options of `countries completion`: the shell to write a script for.
    struct Options: OptionGroup {
        let shell = Argument(
            "shell",
            help: "The shell: " + CompletionShell.allCases.map(\.rawValue).joined(separator: ", ") + "."
        ).map { (name, command) throws(UsageError) -> CompletionShell in
            guard let shell = CompletionShell(rawValue: name) else {
                let names = CompletionShell.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                throw command.usageError("The shell '\(name)' has no completion script; give one of \(names)")
            }
            return shell
        }
    }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        Output.document(CountriesCommandLine.parser.completionScript(for: command[\.shell]))
        return ExitCode.success
    }
}
