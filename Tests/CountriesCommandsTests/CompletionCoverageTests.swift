import ArgumentParsing
import Testing

@testable import CountriesCommands

/// The completion scripts and the man page against `--help` (issue 24): walking the registry,
/// every subcommand and every option that a subcommand's help lists is in each of them, in the
/// place that belongs to that subcommand.
@Suite struct CompletionCoverageTests {
    static let parser = CountriesCommandLine.parser
    static let names = CountriesCommandLine.registry.subcommands.map { $0.name }

    /// The options a help text lists, as typed: `--name` and `-x` from each label line.
    static func listedOptions(inHelpOf name: String) -> [String] {
        parser.helpText(for: ["countries", name]).split(separator: "\n").flatMap { line -> [String] in
            // A label line is indented by 2 and starts with a dash; help lines are indented by 26.
            guard line.hasPrefix("  -") else { return [] }
            let label = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: true)
            return label.prefix { $0.hasPrefix("-") }.map { String($0.trimmingSuffix(",")) }
        }
    }

    @Test func theRootHelpListsEverySubcommandTheScriptsOffer() {
        let rootHelp = Self.parser.helpText(for: ["countries"])
        let bash = Self.parser.completionScript(for: .bash)
        let zsh = Self.parser.completionScript(for: .zsh)
        let fish = Self.parser.completionScript(for: .fish)
        let man = Self.parser.manPage()
        for name in Self.names {
            #expect(rootHelp.contains("\n  \(name) "), "\(name) not in --help")
            #expect(bash.contains("\n    \(name))\n"), "\(name) not in the bash script")
            #expect(zsh.contains("\n        \(name)) _countries_"), "\(name) not in the zsh script")
            #expect(fish.contains("-n __fish_use_subcommand -a '\(name)'"), "\(name) not in the fish script")
            #expect(man.contains(".SS \"countries \(name.roff)\"\n"), "\(name) not in the man page")
        }
        #expect(Self.names.contains("completion") && Self.names.contains("man"))
    }

    @Test(arguments: names)
    func everyOptionTheHelpListsIsInEachScriptAndTheManPage(_ name: String) throws {
        let options = Self.listedOptions(inHelpOf: name)
        #expect(options.contains("--help") && options.contains("-h"))
        let bash = try #require(
            Self.parser.completionScript(for: .bash).section(from: "\n    \(name))\n", to: "\n        ;;\n"))
        let offered = try #require(bash.split(separator: "\n").last).split(separator: " ").map(String.init)
        let zsh = try #require(
            Self.parser.completionScript(for: .zsh).section(
                from: "\n_countries_\(name.identifier)() {", to: "\n}"))
        let fish = Self.parser.completionScript(for: .fish).split(separator: "\n")
            .filter { $0.contains("'__fish_seen_subcommand_from \(name)'") }.joined(separator: "\n")
        let man = try #require(
            Self.parser.manPage().section(from: ".SS \"countries \(name.roff)\"\n", to: "\n.S"))
        for option in options {
            #expect(offered.contains(option), "bash does not offer \(option) for \(name)")
            #expect(
                zsh.contains("'\(option)") || zsh.contains("'*\(option)"),
                "zsh does not complete \(option) for \(name)")
            let fishFlag =
                option.hasPrefix("--") ? " -l \(option.dropFirst(2)) " : " -s \(option.dropFirst()) "
            #expect(fish.contains(fishFlag), "fish does not complete \(option) for \(name)")
            #expect(
                man.contains("\\fB\(option.roff)\\fR"), "the man page does not list \(option) for \(name)")
        }
    }
}

extension String {
    /// From `start` up to `end` (the next one after `start`), or nil when `start` is not there.
    fileprivate func section(from start: String, to end: String) -> String? {
        guard let begin = firstRange(of: start) else { return nil }
        let rest = self[begin.upperBound...]
        return String(rest[..<(rest.firstRange(of: end)?.lowerBound ?? rest.endIndex)])
    }

    /// As the man page writes it: every dash as `\-`.
    fileprivate var roff: String { replacing("-", with: "\\-") }

    /// As the zsh script names its function: `on-change` as `on_change`.
    fileprivate var identifier: String { replacing("-", with: "_") }
}

extension Substring {
    fileprivate func trimmingSuffix(_ suffix: String) -> Substring {
        hasSuffix(suffix) ? dropLast(suffix.count) : self
    }
}
