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
