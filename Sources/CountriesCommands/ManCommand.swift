import ArgumentParsing

/// `countries man`: prints the manual page, made from the registry.
struct ManCommand: Subcommand {
    static let name = "man"
    static let abstract = "Print the manual page (roff, section 1)."
    static let discussion: String? =
        "Pipe it to man -l - to read it. Made from the same declarations as --help."
    static var options: NoOptions { NoOptions() }

    let command: ParsedValues<NoOptions>

    func run() throws -> Int32 {
        Output.document(CountriesCommandLine.parser.manPage())
        return ExitCode.success
    }
}
