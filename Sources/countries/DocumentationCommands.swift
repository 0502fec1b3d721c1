import ArgumentParsing
import CountriesOptions

/// `countries completion SHELL`: prints the shell's completion script, made from the registry.
struct CompletionCommand: CompletionDeclaration {

    typealias Options = CompletionOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        Output.document(CountriesCommandLine.parser.completionScript(for: command[\.shell]))
        return ExitCode.success
    }
}

/// `countries man`: prints the manual page, made from the registry.
struct ManCommand: ManDeclaration {

    typealias Options = NoOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        Output.document(CountriesCommandLine.parser.manPage())
        return ExitCode.success
    }
}
