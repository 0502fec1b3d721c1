import ArgumentParsing
import Foundation
import TestSupport
import Testing

/// Two subcommands declared as types, as the `countries` executable declares its own.
private struct Greet: Subcommand {
    static let name = "greet"
    static let abstract = "Say hello."
    struct Options: OptionGroup {
        let who = Argument("who", help: "Whom to greet.")
        let loud = Option(flag: "loud", help: "Shout.")
        let times = Option(integer: "times", value: "n", help: "How often.", default: 1).map {
            (times, command) throws(UsageError) in
            guard times >= 1 else { throw command.usageError("--times must be at least 1") }
            return times
        }
        let greeting = Option(
            "greeting", value: "word", help: "The word.", default: "hello", environment: "GREETING")
        let connection = Shared()
    }
    static var options: Options { Options() }

    let command: ParsedValues<Options>
    func run() throws -> Int32 { 10 }
}

/// A group shared by several subcommands; its setting is not a declaration.
private struct Shared: OptionGroup {
    let note = "not an option"
    let tag = Option("tag", value: "tag", help: "A tag.", section: "SHARED OPTIONS")
    let labels = Option(repeating: "label", value: "label", help: "Labels.", section: "SHARED OPTIONS")
}

private struct Wave: Subcommand {
    static let name = "wave"
    static let abstract = "Wave."
    static let trailingValueName: String? = "command"
    let command: ParsedValues<NoOptions>
    static var options: NoOptions { NoOptions() }
    func run() throws -> Int32 { 20 }
}

@Suite struct SubcommandTests {
    let registry = SubcommandRegistry(
        name: "tool", abstract: "A tool.", subcommands: [Greet.self, Wave.self])
    var parser: CommandLineParser { CommandLineParser(root: registry.root, version: "1") }

    private func parsed(_ arguments: [String], environment: [String: String] = [:]) throws -> ParsedCommand {
        guard case .run(let command) = try parser.parse(arguments, environment: environment) else {
            Issue.record("expected \(arguments) to run")
            throw CancellationError()
        }
        return command
    }

    @Test func theSpecComesFromTheDeclarationsInOrder() {
        #expect(registry.root.subcommands.map(\.name) == ["greet", "wave"])
        #expect(
            parser.helpText(for: ["tool", "greet"]) == """
                OVERVIEW: Say hello.

                USAGE: tool greet <who> [--loud] [--times <n>] [--greeting <word>] [--tag <tag>] [--label <label> ...]

                ARGUMENTS:
                  <who>                   Whom to greet.

                OPTIONS:
                  --loud                  Shout.
                  --times <n>             How often. (default: 1)
                  --greeting <word>       The word. (default: hello, env: GREETING)
                  -h, --help              Show help information.

                SHARED OPTIONS:
                  --tag <tag>             A tag.
                  --label <label>         Labels.
                """)
        #expect(Wave.spec.acceptsTrailingArguments)
        #expect(parser.helpText(for: ["tool", "wave"]).contains("USAGE: tool wave -- <command> ..."))
    }

    @Test func everyRegisteredSubcommandDispatchesToItsType() throws {
        #expect(try registry.make(parsed(["greet", "you"])).run() == 10)
        #expect(try registry.make(parsed(["wave", "--", "x"])).run() == 20)
    }

    @Test func valuesAreTypedAndDefaultsAreNotOptional() throws {
        let greet = try #require(try registry.make(parsed(["greet", "you"])) as? Greet)
        let who: String = greet.command[\.who]
        let times: Int = greet.command[\.times]
        let greeting: String = greet.command[\.greeting]
        let tag: String? = greet.command[\.connection][\.tag]
        #expect(who == "you" && times == 1 && greeting == "hello" && tag == nil)
        #expect(greet.command[\.loud] == false && greet.command[\.connection][\.labels] == [])
        #expect(greet.command.declared.connection.note == "not an option")

        let given = try #require(
            try registry.make(
                parsed(
                    ["greet", "me", "--loud", "--times", "3", "--tag", "t", "--label", "a", "--label", "b"],
                    environment: ["GREETING": "hi"])) as? Greet)
        #expect(given.command[\.loud] && given.command[\.times] == 3 && given.command[\.greeting] == "hi")
        #expect(given.command[\.connection][\.tag] == "t")
        #expect(given.command[\.connection][\.labels] == ["a", "b"])
    }

    /// A value its declaration refuses is a usage error when the subcommand is made, before it
    /// runs.
    @Test func checksRunBeforeTheSubcommandDoes() throws {
        for (arguments, message) in [
            (["greet", "you", "--times", "0"], "--times must be at least 1"),
            (["greet", "you", "--times", "x"], "The value 'x' is invalid for '--times <n>'"),
        ] {
            let command = try parsed(arguments)
            #expect(throws: UsageError.self) { try registry.make(command) }
            do {
                _ = try registry.make(command)
            } catch {
                #expect(error.message == message)
                #expect(error.usage.hasPrefix("tool greet <who>"))
            }
        }
    }

    /// Keys are key paths into the subcommand's own declarations: a misspelt key, or one that
    /// another subcommand declares, is refused by the compiler rather than trapping at run time.
    /// Type-checks small programs against the built ArgumentParsing module to show it.
    @Test(arguments: [
        ("v[\\.loud]", true),
        ("v[\\.lodu]", false),
        ("v[\\.other]", false),
        ("v[\\.times] as Int", true),
        ("v[\\.times] as String", false),
    ])
    func aKeyThatIsNotDeclaredDoesNotCompile(_ expression: String, compiles: Bool) throws {
        let modules = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("Modules")
        try #require(
            FileManager.default.fileExists(
                atPath: modules.appendingPathComponent("ArgumentParsing.swiftmodule").path),
            "no ArgumentParsing module beside the test binary at \(modules.path)")
        let source = """
            import ArgumentParsing
            struct Mine: OptionGroup {
                let loud = Option(flag: "loud", help: "")
                let times = Option(integer: "times", value: "n", help: "", default: 1)
            }
            struct Theirs: OptionGroup { let other = Option(flag: "other", help: "") }
            func read(_ v: ParsedValues<Mine>) { _ = \(expression) }
            """
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "typed-keys-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("main.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)

        // ChildProcess, not Foundation's Process: its waits have a bound (these five run at
        // once, and two unbounded waits that never ended would stop every other test too).
        let typecheck = try ChildProcess.run(
            "swiftc", ["-typecheck", "-I", modules.path, file.path],
            environment: ProcessInfo.processInfo.environment, timeout: .seconds(120))
        #expect((typecheck.exitCode == 0) == compiles, "\(expression): \(typecheck.stderr)")
        if !compiles { #expect(typecheck.stderr.contains("error:"), "\(typecheck.stderr)") }
    }
}
