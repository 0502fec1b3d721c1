// The declarative description of a command line: commands, positional arguments and options.
// These are plain values; `CommandLineParser` reads them to parse arguments and to render help.

/// One command or subcommand: its name, its help, and what it accepts.
///
/// A command either has subcommands (and then takes no arguments or options of its own;
/// calling it without a subcommand shows its help) or is a leaf that parses arguments.
public struct CommandSpec: Sendable {
    /// The name the user types, e.g. `toggle`; for the root, the executable's name.
    public var name: String
    /// A one-line summary, shown after `OVERVIEW:` and in the parent's `SUBCOMMANDS:` list.
    public var abstract: String
    /// Extra paragraph(s) shown after the overview in this command's help.
    public var discussion: String?
    /// Positional arguments, in order. Only the last may be repeating, and optional ones
    /// must come after the required ones.
    public var arguments: [ArgumentSpec]
    /// Options and flags, in the order they appear in help. `-h`/`--help` is added automatically.
    public var options: [OptionSpec]
    /// Subcommands; empty for a leaf command.
    public var subcommands: [CommandSpec]
    /// Whether the arguments after `--` are collected untouched into `ParsedCommand.trailing`.
    /// When false, `--` only ends option parsing and what follows is positional.
    /// The parser does not require trailing arguments: check `trailing.isEmpty` yourself.
    public var acceptsTrailingArguments: Bool
    /// The name shown for the trailing arguments in the usage line, e.g. `command`.
    public var trailingValueName: String?

    /// Creates a command.
    public init(
        name: String,
        abstract: String,
        discussion: String? = nil,
        arguments: [ArgumentSpec] = [],
        options: [OptionSpec] = [],
        subcommands: [CommandSpec] = [],
        acceptsTrailingArguments: Bool = false,
        trailingValueName: String? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.acceptsTrailingArguments = acceptsTrailingArguments
        self.trailingValueName = trailingValueName
    }
}

/// A positional argument, shown as `<name>` in usage and help.
public struct ArgumentSpec: Sendable {
    /// The name used to look the value up and shown as `<name>`.
    public var name: String
    /// The help text in the `ARGUMENTS:` section.
    public var help: String
    /// Whether the argument takes all remaining positional values (`<name> ...`).
    public var isRepeating: Bool
    /// Whether the argument may be left out (`[<name>]`).
    public var isOptional: Bool

    /// Creates a positional argument.
    public init(name: String, help: String, isRepeating: Bool = false, isOptional: Bool = false) {
        self.name = name
        self.help = help
        self.isRepeating = isRepeating
        self.isOptional = isOptional
    }
}

/// A named option (`--name <value>`) or flag (`--name`).
///
/// Specs are values, so options shared by several commands can be kept in an array and
/// concatenated into each command's `options`.
public struct OptionSpec: Sendable {
    /// The long name without dashes, e.g. `timeout` for `--timeout`.
    public var name: String
    /// An optional one-character short name, e.g. `t` for `-t`.
    public var short: Character?
    /// The name of the value, shown as `<valueName>`; `nil` makes this a flag that takes no value.
    public var valueName: String?
    /// The help text in the `OPTIONS:` section.
    public var help: String
    /// The value used when neither the command line nor the environment gives one.
    public var defaultValue: String?
    /// An environment variable whose value is used when the option is not on the command line. An
    /// empty value counts as unset. For a flag, the value must be a boolean such as `1` or `true`.
    public var environment: String?
    /// When set, the only values accepted (from the command line or the environment).
    public var allowedValues: [String]?
    /// Whether the option may be given several times, collecting every value.
    /// A non-repeating option given twice keeps the last value.
    public var isRepeating: Bool
    /// Whether parsing fails when the option gets no value from the command line,
    /// the environment or its default.
    public var isRequired: Bool
    /// The heading this option is listed under in help, e.g. `CONNECTION OPTIONS`;
    /// nil lists it under `OPTIONS`. Sections appear in the order their first option does.
    public var section: String?

    /// Creates an option; it is a flag (no value) when `valueName` is nil.
    public init(
        name: String,
        short: Character? = nil,
        valueName: String? = nil,
        help: String,
        defaultValue: String? = nil,
        environment: String? = nil,
        allowedValues: [String]? = nil,
        isRepeating: Bool = false,
        isRequired: Bool = false,
        section: String? = nil
    ) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.environment = environment
        self.allowedValues = allowedValues
        self.isRepeating = isRepeating
        self.isRequired = isRequired
        self.section = section
    }

    /// Creates a flag: an option that takes no value.
    public static func flag(
        _ name: String, short: Character? = nil, help: String, environment: String? = nil
    ) -> OptionSpec {
        OptionSpec(name: name, short: short, help: help, environment: environment)
    }

    /// Whether this option is a flag, taking no value.
    public var isFlag: Bool { valueName == nil }

    /// How the option is named in messages and the usage line: `--timeout <ms>` or `--json`.
    var synopsis: String {
        valueName.map { "--\(name) <\($0)>" } ?? "--\(name)"
    }
}
