// Shell completion scripts, generated from the same specs as the help, so a subcommand or an
// option that `--help` shows is one the shells complete.

/// A shell that ``CommandLineParser/completionScript(for:)`` writes a completion script for.
public enum CompletionShell: String, CaseIterable, Sendable {
    case bash
    case zsh
    case fish
}

/// What a shell offers for an option's value.
enum ValueCompletion: Equatable {
    /// Nothing to offer (an endpoint, a number): the user types it.
    case none
    /// One of these words (the option's `allowedValues`).
    case choices([String])
    /// A file name (the value is named `file` or `path`).
    case files
    /// A directory name (the value is named `dir`).
    case directories
}

extension OptionSpec {
    /// What the shells complete after this option; nil for a flag, which takes no value.
    var valueCompletion: ValueCompletion? {
        guard let valueName else { return nil }
        if let allowedValues { return .choices(allowedValues) }
        switch valueName {
        case "file", "path": return .files
        case "dir": return .directories
        default: return ValueCompletion.none
        }
    }

    /// Every spelling the user may type: `--name`, and `-s` when it has a short name.
    var spellings: [String] {
        ["--" + name] + (short.map { ["-\($0)"] } ?? [])
    }
}

extension CommandLineParser {
    /// The completion script for `shell`, to be sourced by it (bash) or installed where it looks
    /// for completions (zsh's `_countries` in `$fpath`, fish's `vendor_completions.d`).
    ///
    /// It completes the root's subcommands (and `help <subcommand>`), each subcommand's options
    /// (the ones its help lists, `-h`/`--help` included), the values of options with allowed
    /// values, and file or directory names for options whose value is named `file`, `path` or
    /// `dir`. A subcommand's own subcommands, if any, are completed by name only.
    public func completionScript(for shell: CompletionShell) -> String {
        switch shell {
        case .bash: bashCompletionScript()
        case .zsh: zshCompletionScript()
        case .fish: fishCompletionScript()
        }
    }

    /// A command's options as its help lists them: its declared ones, then the built-in ones.
    func listedOptions(_ command: CommandSpec, isRoot: Bool) -> [OptionSpec] {
        command.options + builtInOptions(isRoot: isRoot)
    }

    /// The root's subcommands, plus `help` (which the parser takes as a subcommand too).
    var completedSubcommands: [(name: String, abstract: String)] {
        root.subcommands.map { ($0.name, $0.abstract) } + [("help", "Show help for a subcommand.")]
    }
}

/// The first sentence of a help text: the short description a shell shows beside a word. A
/// sentence ends at a full stop followed by a capital (`e.g. this` goes on).
func firstSentence(_ text: String) -> String {
    let flat = Array(text.split(whereSeparator: \.isNewline).joined(separator: " "))
    for index in flat.indices.dropLast(2)
    where flat[index] == "." && flat[index + 1] == " " && flat[index + 2].isUppercase {
        return String(flat[...index])
    }
    return String(flat)
}

/// A name made safe as part of a shell function's name: `on-change` becomes `on_change`.
func shellIdentifier(_ name: String) -> String {
    String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" })
}

/// `text` inside single quotes for a POSIX shell (bash, zsh): `'` becomes `'\''`.
func singleQuoted(_ text: String) -> String {
    "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
}
