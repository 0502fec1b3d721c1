/// A root command and its subcommands as types: the parser's spec tree, the help and the
/// dispatch all come from this one list, so a subcommand cannot be parsed but not run.
public struct SubcommandRegistry {
    /// The root spec: the executable's name and help, and every subcommand's spec in order.
    public let root: CommandSpec
    /// The subcommands, in the order help lists them.
    public let subcommands: [any Subcommand.Type]

    /// Creates the registry. Duplicate names trap when a parser is made from ``root``.
    public init(
        name: String, abstract: String, discussion: String? = nil, subcommands: [any Subcommand.Type]
    ) {
        self.subcommands = subcommands
        root = CommandSpec(
            name: name, abstract: abstract, discussion: discussion, subcommands: subcommands.map { $0.spec })
    }

    /// The subcommand a command parsed against ``root`` is for, with its values read.
    /// Throws a usage error for a value its declaration refuses.
    public func make(_ parsed: ParsedCommand) throws(UsageError) -> any Subcommand {
        guard parsed.path.count == 2, let type = subcommands.first(where: { $0.name == parsed.path[1] })
        else {
            // Only a spec tree other than `root` can give such a path: a programming error.
            preconditionFailure("\(parsed.path.joined(separator: " ")) was not parsed against this registry")
        }
        return try type.make(parsed)
    }
}
