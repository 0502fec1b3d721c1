// Typed option keys: a declaration that is both the option's spec (for parsing and help) and
// the way to read its value, so the two cannot disagree.

/// One option or flag of a command, declared once: its spec and how its value is read.
///
/// The value type says what a reader gets: an option with a default reads as `String` or `Int`,
/// one without as `String?` or `Int?`, a flag as `Bool`, a repeating option as `[String]`.
/// Declare options as stored properties of an ``OptionGroup`` and read them through
/// ``ParsedValues`` by key path (`command[\.timeout]`): a misspelt key path, or one of another
/// command's options, does not compile.
public struct Option<Value: Sendable>: Declaration {
    /// What the parser and the help see.
    public let spec: OptionSpec
    private let read: @Sendable (ParsedCommand) throws(UsageError) -> Value

    /// An option read by `read`, which may check the value and throw a usage error.
    public init(
        _ spec: OptionSpec, read: @escaping @Sendable (ParsedCommand) throws(UsageError) -> Value
    ) {
        self.spec = spec
        self.read = read
    }

    /// The same option, its value converted or checked by `transform` (which gets the parsed
    /// command for `usageError(_:)`).
    public func map<Converted>(
        _ transform: @escaping @Sendable (Value, ParsedCommand) throws(UsageError) -> Converted
    ) -> Option<Converted> {
        let read = self.read
        return Option<Converted>(spec) { (command) throws(UsageError) in try transform(read(command), command)
        }
    }

    public var key: String { "--" + spec.name }

    public func declare(in command: inout CommandSpec) {
        command.options.append(spec)
    }

    public func value(in command: ParsedCommand) throws(UsageError) -> any Sendable {
        try read(command)
    }
}

extension Option where Value == String {
    /// An option with a default: its value is never missing.
    public init(
        _ name: String, short: Character? = nil, value valueName: String, help: String, default: String,
        environment: String? = nil, allowedValues: [String]? = nil, section: String? = nil
    ) {
        self.init(
            OptionSpec(
                name: name, short: short, valueName: valueName, help: help, defaultValue: `default`,
                environment: environment, allowedValues: allowedValues, section: section)
        ) { command in command.value(name) ?? `default` }
    }
}

extension Option where Value == String? {
    /// An option without a default: nil when neither the command line nor the environment gives it.
    public init(
        _ name: String, short: Character? = nil, value valueName: String, help: String,
        environment: String? = nil, allowedValues: [String]? = nil, section: String? = nil
    ) {
        self.init(
            OptionSpec(
                name: name, short: short, valueName: valueName, help: help, environment: environment,
                allowedValues: allowedValues, section: section)
        ) { command in command.value(name) }
    }
}

extension Option where Value == Int {
    /// An integer option with a default; a value that is not an integer is a usage error.
    /// (`integer:` and not `_`, so that `Option("x", value:help:)` is always a string.)
    public init(
        integer name: String, short: Character? = nil, value valueName: String, help: String, default: Int,
        environment: String? = nil, section: String? = nil
    ) {
        self.init(
            OptionSpec(
                name: name, short: short, valueName: valueName, help: help, defaultValue: "\(`default`)",
                environment: environment, section: section)
        ) { (command) throws(UsageError) in try command.int(name) ?? `default` }
    }
}

extension Option where Value == Int? {
    /// An integer option without a default; a value that is not an integer is a usage error.
    public init(
        integer name: String, short: Character? = nil, value valueName: String, help: String,
        environment: String? = nil, section: String? = nil
    ) {
        self.init(
            OptionSpec(
                name: name, short: short, valueName: valueName, help: help, environment: environment,
                section: section)
        ) { (command) throws(UsageError) in try command.int(name) }
    }
}

extension Option where Value == Bool {
    /// A flag: true when given (or when its environment variable is true).
    public init(flag name: String, short: Character? = nil, help: String, environment: String? = nil) {
        self.init(.flag(name, short: short, help: help, environment: environment)) { command in
            command.flag(name)
        }
    }
}

extension Option where Value == [String] {
    /// A repeating option: every value given, in order (empty when none); its environment
    /// variable gives one value, used when the command line gives none.
    public init(
        repeating name: String, short: Character? = nil, value valueName: String, help: String,
        environment: String? = nil, section: String? = nil
    ) {
        self.init(
            OptionSpec(
                name: name, short: short, valueName: valueName, help: help, environment: environment,
                isRepeating: true, section: section)
        ) { command in command.values(name) }
    }
}
