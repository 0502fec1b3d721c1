// Parsing: from `[String]` to a `ParseOutcome`, or a `UsageError` worded like
// swift-argument-parser's.

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

    /// Parses `arguments` (without the executable's name, i.e.
    /// `CommandLine.arguments.dropFirst()`).
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

    /// Parses the process's arguments as they came, bytes (without the executable's name): as
    /// ``parse(_:environment:)``, but an argument that is not valid UTF-8 is a usage error
    /// naming it. Swift's `CommandLine.arguments` repairs such bytes with U+FFFD, so a name
    /// would have been stored as another and a path would have named another file.
    public func parse(bytes arguments: [[UInt8]], environment: [String: String]) throws(UsageError)
        -> ParseOutcome
    {
        let words = arguments.map { String(decoding: $0, as: UTF8.self) }
        guard let bad = arguments.firstIndex(where: { String(validating: $0, as: UTF8.self) == nil }) else {
            return try parse(words, environment: environment)
        }
        var command = root
        var path = [root.name]
        for word in words {
            guard let subcommand = command.subcommands.first(where: { $0.name == word }) else { break }
            command = subcommand
            path.append(word)
        }
        throw error(
            "argument \(bad + 1) (\(Self.escapingInvalidUTF8(arguments[bad]))) is not valid UTF-8; give names and paths in UTF-8 (a script or terminal in another encoding: check its locale)",
            command, path)
    }

    /// `bytes` as text with each byte that is not part of valid UTF-8 shown as `\xNN`, cut
    /// after 60 characters.
    static func escapingInvalidUTF8(_ bytes: [UInt8]) -> String {
        var shown = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var position = 0
        while shown.count <= 60 {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                shown.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                position += encoded.count
            case .error(let length):
                for byte in bytes[position..<position + length] {
                    shown += "\\x" + String(byte, radix: 16, uppercase: true)
                }
                position += length
            case .emptyInput:
                return shown
            }
        }
        return String(shown.prefix(60)) + "…"
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
                        + "Please provide one of 'true' and 'false' ('yes' and 'no', '1' and '0').",
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

/// Whether a word is an option (or `--`) rather than a value: `-` alone and negative numbers are
/// values.
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

/// The candidate closest to `typed`, when it is close enough to be a likely typo (an edit
/// distance of at most a third of its length, 1 to 3); the first of equals.
public func closestName(to typed: String, among candidates: [String]) -> String? {
    let length = typed.count
    let limit = max(1, min(3, length / 3))
    var best: (name: String, distance: Int)?
    // A length further off than the limit cannot be within it: skipped without the table.
    for candidate in candidates where abs(candidate.count - length) <= limit {
        let distance = editDistance(candidate, typed)
        if distance <= limit, distance < best?.distance ?? .max { best = (candidate, distance) }
    }
    return best?.name
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
