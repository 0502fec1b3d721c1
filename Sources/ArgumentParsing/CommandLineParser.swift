// Parsing: from `[String]` to a `ParseOutcome`, or a `UsageError` worded like swift-argument-parser's.

/// What the command line asked for.
public enum ParseOutcome: Sendable {
    /// Run the leaf command described by the parsed values.
    case run(ParsedCommand)
    /// Print this help text (it has no trailing newline) to standard output and exit successfully.
    case help(String)
    /// Print the version given to `CommandLineParser.init` and exit successfully.
    case version
}

/// A command line that could not be parsed, with the usage of the command it was meant for.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// The one-line problem, e.g. `Missing expected argument '<target>'`.
    public var message: String
    /// The command the error is about, e.g. `["countries", "toggle"]`.
    public var commandPath: [String]
    /// That command's usage line, e.g. `countries toggle <target> ... [--json]`.
    public var usage: String

    /// Creates an error; prefer `ParsedCommand.usageError(_:)`, which fills in the usage.
    public init(message: String, commandPath: [String], usage: String) {
        self.message = message
        self.commandPath = commandPath
        self.usage = usage
    }

    /// Full text for standard error, as swift-argument-parser prints it (no trailing newline):
    ///
    ///     Error: Missing expected argument '<target>'
    ///     Usage: countries toggle <target> ... [--json]
    ///       See 'countries toggle --help' for more information.
    public var description: String {
        """
        Error: \(message)
        Usage: \(usage)
          See '\(commandPath.joined(separator: " ")) --help' for more information.
        """
    }
}

/// The values of a successfully parsed leaf command.
///
/// Looking up a name the command's spec does not declare is a programming error and traps.
public struct ParsedCommand: Sendable {
    /// The command names from the root, e.g. `["countries", "toggle"]`.
    public var path: [String]
    /// The arguments after `--`, untouched, when the command accepts trailing arguments.
    public var trailing: [String]

    /// The spec of the command that was parsed.
    public let spec: CommandSpec
    let usage: String
    /// Values given on the command line, by option name; a flag given gets one empty value.
    var explicitValues: [String: [String]]
    /// Non-empty values of the options' environment variables, by option name.
    var environmentValues: [String: String]
    /// Positional values by argument name.
    var argumentValues: [String: [String]]

    /// The option's value: the last one given on the command line, else its environment
    /// variable's value, else its default.
    public func value(_ option: String) -> String? {
        let spec = optionSpec(option)
        return explicitValues[option]?.last ?? environmentValues[option] ?? spec.defaultValue
    }

    /// All values of a repeating option given on the command line; if none were given,
    /// the environment variable's value or the default, as a single value.
    public func values(_ option: String) -> [String] {
        if let given = explicitValues[option], !given.isEmpty { return given }
        return value(option).map { [$0] } ?? []
    }

    /// Whether the flag was given, or else whether its environment variable is true.
    public func flag(_ name: String) -> Bool {
        precondition(optionSpec(name).isFlag, "'--\(name)' takes a value; use value(_:)")
        if explicitValues[name] != nil { return true }
        return environmentValues[name].flatMap(parseBool) ?? false
    }

    /// The option's value as an integer, or nil when it has none.
    /// Throws `The value 'abc' is invalid for '--timeout <ms>'` when it is not an integer.
    public func int(_ option: String) throws(UsageError) -> Int? {
        guard let raw = value(option) else { return nil }
        guard let number = Int(raw) else { throw invalidValue(raw, for: option) }
        return number
    }

    /// The option's value as a boolean (`true`/`false`, `yes`/`no`, `1`/`0`, any case),
    /// or nil when it has none. Throws a usage error for anything else.
    public func bool(_ option: String) throws(UsageError) -> Bool? {
        guard let raw = value(option) else { return nil }
        guard let result = parseBool(raw) else { throw invalidValue(raw, for: option) }
        return result
    }

    /// The positional argument's value (the first, for a repeating one), or nil when left out.
    public func argument(_ name: String) -> String? {
        arguments(name).first
    }

    /// All values of a repeating positional argument (empty when left out).
    public func arguments(_ name: String) -> [String] {
        precondition(spec.arguments.contains { $0.name == name }, "No argument '<\(name)>' in '\(spec.name)'")
        return argumentValues[name] ?? []
    }

    /// Where an option's value comes from.
    public enum ValueSource: Sendable, Equatable {
        /// The command line.
        case commandLine
        /// This environment variable.
        case environment(String)
        /// Neither: the default, if any.
        case none
    }

    /// Where the option's value comes from: the command line wins over the environment.
    public func source(_ option: String) -> ValueSource {
        if explicitValues[option] != nil { return .commandLine }
        if let variable = environmentVariable(supplying: option) { return .environment(variable) }
        return .none
    }

    /// The environment variable the option's value came from, or nil when it came from the
    /// command line or its default.
    public func environmentVariable(supplying option: String) -> String? {
        guard explicitValues[option] == nil, environmentValues[option] != nil else { return nil }
        return optionSpec(option).environment
    }

    /// `error` about the declaration `key` (`--timeout`), saying which environment variable
    /// gave the value when it came from there: the user may not know it is set.
    public func namingTheEnvironment(in error: UsageError, for key: String) -> UsageError {
        guard key.hasPrefix("--"), let variable = environmentVariable(supplying: String(key.dropFirst(2)))
        else { return error }
        var error = error
        error.message += " (the value of \(variable))"
        return error
    }

    /// A usage error for this command, for checks the caller makes after parsing.
    public func usageError(_ message: String) -> UsageError {
        UsageError(message: message, commandPath: path, usage: usage)
    }

    private func optionSpec(_ name: String) -> OptionSpec {
        guard let option = spec.options.first(where: { $0.name == name }) else {
            preconditionFailure("No option '--\(name)' in '\(spec.name)'")
        }
        return option
    }

    private func invalidValue(_ raw: String, for option: String) -> UsageError {
        usageError("The value '\(raw)' is invalid for '\(optionSpec(option).synopsis)'")
    }
}

/// Parses command lines against a tree of `CommandSpec`s and renders their help.
public struct CommandLineParser: Sendable {
    /// The root command; its name is the executable's name.
    public let root: CommandSpec
    /// The version printed for `--version`.
    public let version: String

    /// Creates a parser. Traps when the specs are inconsistent (a programming error): duplicate
    /// names, a repeating argument that is not last, a required argument after an optional one,
    /// or a command with subcommands that also declares arguments or options.
    public init(root: CommandSpec, version: String) {
        Self.validate(root)
        self.root = root
        self.version = version
    }

    /// Parses `arguments` (without the executable's name, i.e. `CommandLine.arguments.dropFirst()`).
    ///
    /// `-h`/`--help` anywhere before `--`, `help [<subcommand> ...]` and a command with subcommands
    /// called without one give `.help`; `--version` right after the root's name (anywhere before
    /// `--` for a root without subcommands) gives `.version`.
    public func parse(_ arguments: [String], environment: [String: String]) throws(UsageError)
        -> ParseOutcome
    {
        var command = root
        var path = [root.name]
        var rest = arguments[...]
        while !command.subcommands.isEmpty {
            guard let word = rest.popFirst() else { return .help(helpText(command, path: path)) }
            if word == "-h" || word == "--help" { return .help(helpText(command, path: path)) }
            if word == "--version" && path.count == 1 { return .version }
            if word == "help" && path.count == 1 { return try helpOutcome(for: Array(rest)) }
            if word.hasPrefix("-") && word.count > 1 {
                let known = path.count == 1 ? ["help", "version"] : ["help"]
                throw error(unknownOptionMessage(word, known: known), command, path)
            }
            guard let subcommand = command.subcommands.first(where: { $0.name == word }) else {
                throw error(unknownSubcommandMessage(word, in: command), command, path)
            }
            command = subcommand
            path.append(word)
        }
        let beforeDashDash = rest.prefix { $0 != "--" }
        if beforeDashDash.contains(where: { $0 == "-h" || $0 == "--help" }) {
            return .help(helpText(command, path: path))
        }
        // A root without subcommands lists `--version` in its help too: it answers it.
        if path.count == 1 && beforeDashDash.contains("--version") { return .version }
        return .run(try parseLeaf(command, path: path, Array(rest), environment: environment))
    }

    /// The help text for the command at `path`: command names starting with the root's name,
    /// e.g. `["countries", "toggle"]`. The descent stops at the first name that does not match.
    public func helpText(for path: [String]) -> String {
        var command = root
        var resolved = [root.name]
        for name in path.dropFirst(path.first == root.name ? 1 : 0) {
            guard let subcommand = command.subcommands.first(where: { $0.name == name }) else { break }
            command = subcommand
            resolved.append(name)
        }
        return helpText(command, path: resolved)
    }

    // MARK: - Parsing a leaf command

    private func parseLeaf(
        _ command: CommandSpec, path: [String], _ words: [String], environment: [String: String]
    ) throws(UsageError) -> ParsedCommand {
        var explicit: [String: [String]] = [:]
        var positionals: [String] = []
        var trailing: [String] = []
        var index = 0
        var optionsEnded = false

        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !looksLikeOption(word) {
                positionals.append(word)
                continue
            }
            if word == "--" {
                if command.acceptsTrailingArguments {
                    trailing = Array(words[index...])
                    break
                }
                optionsEnded = true
                continue
            }

            // `--name`, `--name=value` or `-n`.
            let typedName: String
            var inlineValue: String?
            let option: OptionSpec?
            if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                if let equals = body.firstIndex(of: "=") {
                    typedName = "--" + body[..<equals]
                    inlineValue = String(body[body.index(after: equals)...])
                } else {
                    typedName = word
                }
                option = command.options.first { "--" + $0.name == typedName }
            } else {
                typedName = word
                option = command.options.first { $0.short.map { "-\($0)" } == word }
            }
            guard let option else {
                let known = command.options.map(\.name) + ["help"]
                throw error(unknownOptionMessage(typedName, known: known), command, path)
            }

            if option.isFlag {
                if let inlineValue {
                    throw error(
                        "The option '\(typedName)' does not take any value, but '\(inlineValue)' was specified.",
                        command, path)
                }
                explicit[option.name, default: []].append("")
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < words.count, !looksLikeOption(words[index]) {
                value = words[index]
                index += 1
            } else {
                throw error("Missing value for '\(typedName) <\(option.valueName ?? "")>'", command, path)
            }
            if let message = invalidChoiceMessage(value, for: option, typedName: typedName) {
                throw error(message, command, path)
            }
            explicit[option.name, default: []].append(value)
        }

        let fromEnvironment = try environmentValues(command, path: path, environment, explicit: explicit)
        for option in command.options where option.isRequired {
            if explicit[option.name] == nil && fromEnvironment[option.name] == nil
                && option.defaultValue == nil
            {
                throw error("Missing expected argument '\(option.synopsis)'", command, path)
            }
        }
        let byName = try assignPositionals(positionals, to: command, path: path)
        return ParsedCommand(
            path: path, trailing: trailing, spec: command, usage: usageLine(command, path: path),
            explicitValues: explicit, environmentValues: fromEnvironment, argumentValues: byName)
    }

    /// The non-empty environment values of the options not given on the command line, checked.
    private func environmentValues(
        _ command: CommandSpec, path: [String], _ environment: [String: String], explicit: [String: [String]]
    ) throws(UsageError) -> [String: String] {
        var values: [String: String] = [:]
        for option in command.options where explicit[option.name] == nil {
            guard let variable = option.environment, let value = environment[variable], !value.isEmpty
            else { continue }
            if option.isFlag, parseBool(value) == nil {
                throw error(
                    "The value '\(value)' of \(variable) is invalid for '--\(option.name)'. "
                        + "Please provide one of 'true' and 'false'.",
                    command, path)
            }
            if let message = invalidChoiceMessage(
                value, for: option, typedName: "--\(option.name)", variable: variable)
            {
                throw error(message, command, path)
            }
            values[option.name] = value
        }
        return values
    }

    /// Hands the positional values to the arguments in order; the repeating one takes the rest.
    private func assignPositionals(
        _ positionals: [String], to command: CommandSpec, path: [String]
    ) throws(UsageError) -> [String: [String]] {
        var byName: [String: [String]] = [:]
        var remaining = positionals[...]
        for argument in command.arguments {
            if argument.isRepeating {
                byName[argument.name] = Array(remaining)
                remaining = []
            } else if let value = remaining.popFirst() {
                byName[argument.name] = [value]
            }
            if byName[argument.name, default: []].isEmpty && !argument.isOptional {
                throw error("Missing expected argument '<\(argument.name)>'", command, path)
            }
        }
        switch remaining.count {
        case 0: break
        case 1: throw error("Unexpected argument '\(remaining[remaining.startIndex])'", command, path)
        default:
            let list = remaining.joined(separator: "', '")
            throw error("\(remaining.count) unexpected arguments: '\(list)'", command, path)
        }
        return byName
    }

    /// `help`, `help toggle`, `help db migrate`: help for the named command.
    private func helpOutcome(for names: [String]) throws(UsageError) -> ParseOutcome {
        var command = root
        var path = [root.name]
        for name in names where name != "-h" && name != "--help" {
            guard !command.subcommands.isEmpty else {
                throw error("Unexpected argument '\(name)'", command, path)
            }
            guard let subcommand = command.subcommands.first(where: { $0.name == name }) else {
                throw error(unknownSubcommandMessage(name, in: command), command, path)
            }
            command = subcommand
            path.append(name)
        }
        return .help(helpText(command, path: path))
    }

    // MARK: - Messages

    private func error(_ message: String, _ command: CommandSpec, _ path: [String]) -> UsageError {
        UsageError(message: message, commandPath: path, usage: usageLine(command, path: path))
    }

    private func unknownOptionMessage(_ typed: String, known: [String]) -> String {
        var message = "Unknown option '\(typed)'"
        if typed.hasPrefix("--"), let close = closestName(to: String(typed.dropFirst(2)), among: known) {
            message += ". Did you mean '--\(close)'?"
        }
        return message
    }

    private func unknownSubcommandMessage(_ typed: String, in command: CommandSpec) -> String {
        var message = "Unknown subcommand '\(typed)'"
        if let close = closestName(to: typed, among: command.subcommands.map(\.name)) {
            message += ". Did you mean '\(close)'?"
        }
        return message
    }

    /// The swift-argument-parser wording for a value outside `allowedValues`, or nil when allowed.
    private func invalidChoiceMessage(
        _ value: String, for option: OptionSpec, typedName: String, variable: String? = nil
    ) -> String? {
        guard let allowed = option.allowedValues, !allowed.contains(value) else { return nil }
        let quoted = allowed.map { "'\($0)'" }
        let list =
            quoted.count <= 2
            ? quoted.joined(separator: " and ")
            : quoted.dropLast().joined(separator: ", ") + " or " + quoted[quoted.count - 1]
        let source = variable.map { " of \($0)" } ?? ""
        return "The value '\(value)'\(source) is invalid for '\(typedName) <\(option.valueName ?? "")>'. "
            + "Please provide one of \(list)."
    }

    // MARK: - Checking the specs

    private static func validate(_ command: CommandSpec) {
        let names = command.options.map(\.name) + ["help"]
        precondition(Set(names).count == names.count, "Duplicate option names in '\(command.name)'")
        let shorts = command.options.compactMap(\.short) + ["h"]
        precondition(Set(shorts).count == shorts.count, "Duplicate short option names in '\(command.name)'")
        let argumentNames = command.arguments.map(\.name)
        precondition(
            Set(argumentNames).count == argumentNames.count, "Duplicate arguments in '\(command.name)'")
        for (offset, argument) in command.arguments.enumerated() {
            let later = command.arguments.dropFirst(offset + 1)
            precondition(!argument.isRepeating || later.isEmpty, "Only the last argument may repeat")
            precondition(
                !argument.isOptional || later.allSatisfy(\.isOptional),
                "A required argument cannot follow an optional one")
        }
        if !command.subcommands.isEmpty {
            precondition(
                command.arguments.isEmpty && command.options.isEmpty && !command.acceptsTrailingArguments,
                "'\(command.name)' has subcommands, so it takes no arguments or options of its own")
        }
        let subcommandNames = command.subcommands.map(\.name)
        precondition(Set(subcommandNames).count == subcommandNames.count, "Duplicate subcommands")
        for subcommand in command.subcommands { validate(subcommand) }
    }
}

// MARK: - Small helpers

/// Whether a word is an option (or `--`) rather than a value: `-` alone and negative numbers are values.
func looksLikeOption(_ word: String) -> Bool {
    guard word.hasPrefix("-"), word.count > 1 else { return false }
    return Int(word) == nil && Double(word) == nil
}

/// `true`/`false`, `yes`/`no`, `1`/`0` in any case; nil for anything else.
func parseBool(_ text: String) -> Bool? {
    switch text.lowercased() {
    case "true", "yes", "1": true
    case "false", "no", "0": false
    default: nil
    }
}

/// The candidate closest to `typed`, when it is close enough to be a likely typo.
func closestName(to typed: String, among candidates: [String]) -> String? {
    let limit = max(1, min(3, typed.count / 3))
    let scored = candidates.map { (name: $0, distance: editDistance($0, typed)) }
    guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= limit else { return nil }
    return best.name
}

/// The Levenshtein distance between two strings.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    guard !a.isEmpty else { return b.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in stride(from: 1, through: b.count, by: 1) {
            let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
            current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
        }
        previous = current
    }
    return previous[b.count]
}
