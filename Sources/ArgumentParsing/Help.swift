// Help and usage text, laid out like swift-argument-parser's: labels indented by 2,
// help text in a column at 26, lines wrapped at 80.

private let screenWidth = 80
private let labelIndent = 2
private let labelColumn = 26

extension CommandLineParser {
    /// The usage line without the `USAGE: ` prefix, e.g. `countries toggle <target> ... [--json]`.
    /// Positional arguments come first, then options, then the trailing `-- <name> ...`.
    func usageLine(_ command: CommandSpec, path: [String]) -> String {
        var parts = [path.joined(separator: " ")]
        if !command.subcommands.isEmpty {
            parts.append("<subcommand>")
        }
        for argument in command.arguments {
            var synopsis = "<\(argument.name)>"
            if argument.isRepeating { synopsis += " ..." }
            parts.append(argument.isOptional ? "[\(synopsis)]" : synopsis)
        }
        for option in command.options {
            var synopsis = option.synopsis
            if option.isRepeating { synopsis += " ..." }
            let isOptional = !option.isRequired || option.defaultValue != nil
            parts.append(isOptional ? "[\(synopsis)]" : synopsis)
        }
        if command.acceptsTrailingArguments {
            parts.append("-- <\(command.trailingValueName ?? "arguments")> ...")
        }
        return parts.joined(separator: " ")
    }

    /// The full help for `command`, reached through `path`; no trailing newline.
    func helpText(_ command: CommandSpec, path: [String]) -> String {
        var overview = command.abstract.isEmpty ? "" : "OVERVIEW: \(command.abstract)"
        if let discussion = command.discussion, !discussion.isEmpty {
            overview += (overview.isEmpty ? "" : "\n\n") + discussion
        }

        var text = ""
        if !overview.isEmpty {
            text += wrap(overview, indent: 0).joined(separator: "\n") + "\n\n"
        }
        text += "USAGE: \(usageLine(command, path: path))\n"

        let arguments = command.arguments.map { (label: "<\($0.name)>", help: $0.help) }
        let options = (command.options.filter { $0.section == nil } + builtInOptions(isRoot: path.count == 1))
            .map { (label: optionLabel($0), help: optionHelp($0)) }
        var sections: [String] = []
        for case let section? in command.options.map(\.section) where !sections.contains(section) {
            sections.append(section)
        }
        let grouped = sections.map { section in
            (
                section,
                command.options.filter { $0.section == section }
                    .map { (label: optionLabel($0), help: optionHelp($0)) }
            )
        }
        let subcommands = command.subcommands.map { (label: $0.name, help: $0.abstract) }

        for (header, rows) in [("ARGUMENTS", arguments), ("OPTIONS", options)] + grouped + [
            ("SUBCOMMANDS", subcommands)
        ]
        where !rows.isEmpty {
            text += "\n\(header):\n"
            for row in rows {
                text += renderRow(label: row.label, help: row.help) + "\n"
            }
        }
        if !command.subcommands.isEmpty {
            var names = path
            names.insert("help", at: 1)
            text += "\n  See '\(names.joined(separator: " ")) <subcommand>' for detailed help.\n"
        }
        return String(text.dropLast())
    }

    /// The options every command has without declaring them: `--version` on the root, and
    /// `-h, --help`. The help, the completion scripts and the man page all list these.
    func builtInOptions(isRoot: Bool) -> [OptionSpec] {
        (isRoot ? [.flag("version", help: "Show the version.")] : [])
            + [.flag("help", short: "h", help: "Show help information.")]
    }

    func optionLabel(_ option: OptionSpec) -> String {
        let long = option.synopsis
        return option.short.map { "-\($0), \(long)" } ?? long
    }

    /// The help text followed by `(values: a, b; default: x, env: NAME)` where those apply.
    func optionHelp(_ option: OptionSpec) -> String {
        var notes: [String] = []
        if let allowed = option.allowedValues {
            notes.append("values: " + allowed.joined(separator: ", "))
        }
        let sources = [option.defaultValue.map { "default: \($0)" }, option.environment.map { "env: \($0)" }]
            .compactMap { $0 }
        if !sources.isEmpty {
            notes.append(sources.joined(separator: ", "))
        }
        guard !notes.isEmpty else { return option.help }
        let annotation = "(\(notes.joined(separator: "; ")))"
        return option.help.isEmpty ? annotation : "\(option.help) \(annotation)"
    }

    /// `  label                   help that wraps onto lines indented to the column`; a label too
    /// wide for the column gets a line of its own.
    private func renderRow(label: String, help: String) -> String {
        let paddedLabel = String(repeating: " ", count: labelIndent) + label
        guard !help.isEmpty else { return paddedLabel }
        var lines = wrap(help, indent: labelColumn)
        if paddedLabel.count < labelColumn {
            lines[0] = paddedLabel + lines[0].dropFirst(paddedLabel.count)
        } else {
            lines.insert(paddedLabel, at: 0)
        }
        return lines.joined(separator: "\n")
    }
}

/// Word-wraps `text` to the screen width, each line (including the first) indented by `indent`
/// spaces. Existing line breaks are kept; a word longer than the line stays whole.
func wrap(_ text: String, indent: Int, width: Int = screenWidth) -> [String] {
    let margin = String(repeating: " ", count: indent)
    var lines: [String] = []
    for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
        var line = ""
        for word in paragraph.split(separator: " ") {
            if !line.isEmpty && margin.count + line.count + 1 + word.count > width {
                lines.append(margin + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(line.isEmpty ? "" : margin + line)
    }
    return lines
}
