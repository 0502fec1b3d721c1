/// The values of a parsed command, read and checked once, looked up by typed key path.
///
/// Every declared value is read when this is made, so a bad value is a usage error before the
/// command does anything; afterwards `command[\.timeout]` cannot fail, and a key that the
/// command does not declare does not compile.
public struct ParsedValues<Options: OptionGroup>: Sendable {
    /// The declarations the values were read with; settings of the groups are read from here.
    public let declared: Options
    /// The parsed command: its path, its trailing arguments, the string lookups.
    public let parsed: ParsedCommand
    private let values: [String: any Sendable]

    /// Reads every declaration of `declared` from `parsed`, which must have been parsed with
    /// a spec holding them (``Subcommand/spec``).
    public init(_ parsed: ParsedCommand, declared: Options) throws(UsageError) {
        var values: [String: any Sendable] = [:]
        for declaration in declared.declarations {
            do {
                values[declaration.key] = try declaration.value(in: parsed)
            } catch {
                throw parsed.namingTheEnvironment(in: error, for: declaration.key)
            }
        }
        self.init(declared: declared, parsed: parsed, values: values)
    }

    private init(declared: Options, parsed: ParsedCommand, values: [String: any Sendable]) {
        self.declared = declared
        self.parsed = parsed
        self.values = values
    }

    /// The value of an option.
    public subscript<Value>(_ key: KeyPath<Options, Option<Value>>) -> Value {
        stored(declared[keyPath: key].key)
    }

    /// The value of a positional argument.
    public subscript<Value>(_ key: KeyPath<Options, Argument<Value>>) -> Value {
        stored(declared[keyPath: key].key)
    }

    /// The values of a nested group, for code that works with the group alone.
    public subscript<Group: OptionGroup>(_ key: KeyPath<Options, Group>) -> ParsedValues<Group> {
        ParsedValues<Group>(declared: declared[keyPath: key], parsed: parsed, values: values)
    }

    /// The command names from the root, e.g. `["countries", "toggle"]`.
    public var path: [String] { parsed.path }

    /// The arguments after `--`, when the command accepts trailing arguments.
    public var trailing: [String] { parsed.trailing }

    /// A usage error for this command, for checks that involve more than one value.
    public func usageError(_ message: String) -> UsageError {
        parsed.usageError(message)
    }

    /// A usage error about the option `--name`'s value, found after parsing; it names the
    /// environment variable the value came from, if it came from one.
    public func usageError(_ message: String, about name: String) -> UsageError {
        parsed.namingTheEnvironment(in: parsed.usageError(message), for: "--" + name)
    }

    private func stored<Value>(_ key: String) -> Value {
        // Stored by `init` from the same declaration, with the same type: cannot fail.
        guard let value = values[key] as? Value else {
            preconditionFailure("\(key) was not read as \(Value.self)")
        }
        return value
    }
}
