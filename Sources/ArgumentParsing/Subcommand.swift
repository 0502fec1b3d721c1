/// One subcommand, as one type: its name, help and options are declared on the type, and its
/// spec (for parsing and help) and its values (for running) both come from those declarations.
///
/// Modelled on swift-argument-parser's `ParsableCommand`, without property wrappers: the
/// options are an ``OptionGroup`` value, read by key path through ``ParsedValues``.
public protocol Subcommand {
    /// The options and arguments this subcommand declares.
    associatedtype Options: OptionGroup

    /// The name the user types, e.g. `toggle`.
    static var name: String { get }
    /// A one-line summary for `OVERVIEW:` and the parent's `SUBCOMMANDS:` list.
    static var abstract: String { get }
    /// Extra paragraph(s) after the overview; nil for none.
    static var discussion: String? { get }
    /// When set, the arguments after `--` are collected into `trailing`, shown as `<name> ...`.
    static var trailingValueName: String? { get }
    /// The declarations; made afresh on each use, so they may depend on `name`.
    static var options: Options { get }

    /// The subcommand with its values parsed and checked.
    init(command: ParsedValues<Options>)

    /// Does the work and returns the process's exit status.
    func run() throws -> Int32
}

extension Subcommand {
    public static var discussion: String? { nil }
    public static var trailingValueName: String? { nil }

    /// The spec the parser and the help use, built from ``options``.
    public static var spec: CommandSpec {
        var spec = CommandSpec(
            name: name, abstract: abstract, discussion: discussion,
            acceptsTrailingArguments: trailingValueName != nil, trailingValueName: trailingValueName)
        for declaration in options.declarations { declaration.declare(in: &spec) }
        return spec
    }

    /// Reads the values of `parsed` (which was parsed with ``spec``) and makes the subcommand;
    /// throws a usage error for a value its declaration refuses.
    public static func make(_ parsed: ParsedCommand) throws(UsageError) -> Self {
        Self(command: try ParsedValues(parsed, declared: options))
    }
}
