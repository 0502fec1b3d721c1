import ArgumentParsing

/// The options of `countries completion`: the shell to write a script for.
public struct CompletionOptions: OptionGroup {
    public let shell = Argument(
        "shell", help: "The shell: " + CompletionShell.allCases.map(\.rawValue).joined(separator: ", ") + "."
    ).map { (name, command) throws(UsageError) -> CompletionShell in
        guard let shell = CompletionShell(rawValue: name) else {
            let names = CompletionShell.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            throw command.usageError("The shell '\(name)' has no completion script; give one of \(names)")
        }
        return shell
    }

    public init() {}
}
