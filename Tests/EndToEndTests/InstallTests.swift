import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// What an operator installs (issue 24): the completion scripts and the man page the binary
/// prints, as bash and groff read them and against its --help; scripts/install into a scratch
/// --destdir; and `serve` telling systemd it is ready (Type=notify) only once it answers.
@Suite struct InstallTests {
    /// Runs `script` in bash with the binary's bash completion loaded; `complete WORD...` prints
    /// what completing the last word offers, one per line.
    static func bash(_ script: String) throws -> Execution {
        let completion = try Countries.run(["completion", "bash"])
        #expect(completion.exitCode == 0, "\(completion)")
        let prelude =
            completion.stdout + """
                completions() {
                    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
                    _countries
                    printf '%s\\n' "${COMPREPLY[@]}"
                }

                """
        return try ChildProcess.run("/bin/bash", ["--norc", "--noprofile", "-c", prelude + script])
    }

    /// The subcommands `countries --help` lists.
    static func subcommandsInHelp() throws -> [String] {
        let help = try Countries.run(["--help"]).stdout
        let section = try #require(help.components(separatedBy: "SUBCOMMANDS:\n").last)
        // Up to the blank line; a wrapped abstract goes on at a deeper indent.
        let rows = section.components(separatedBy: "\n\n")[0].split(separator: "\n")
        return rows.filter { !$0.hasPrefix("   ") }.compactMap {
            $0.split(separator: " ").first.map(String.init)
        }
    }

    /// The options `countries NAME --help` lists: each `--long` and `-s` of its label lines.
    static func optionsInHelp(of name: String) throws -> [String] {
        try Countries.run([name, "--help"]).stdout.split(separator: "\n").filter { $0.hasPrefix("  -") }
            .flatMap { line in
                line.split(separator: " ").prefix { $0.hasPrefix("-") }.map {
                    $0.hasSuffix(",") ? String($0.dropLast()) : String($0)
                }
            }
    }

    @Test func bashCompletesSubcommandsAndOptions() throws {
        let result = try Self.bash("completions countries tog; echo ==; completions countries serve --d")
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout == "toggle\n==\n--db\n", "\(result)")
    }

    @Test func bashOffersEveryOptionEachSubcommandsHelpLists() throws {
        let names = try Self.subcommandsInHelp()
        #expect(names.count >= 20 && names.contains("completion") && names.contains("man"), "\(names)")
        let script = names.map { "echo \"== \($0)\"; completions countries \($0) ''" }.joined(separator: "\n")
        let result = try Self.bash("completions countries ''; " + script)
        #expect(result.exitCode == 0, "\(result)")
        let blocks = result.stdout.components(separatedBy: "== ")
        let topLevel = Set(blocks[0].split(separator: "\n").map(String.init))
        #expect(Set(names).isSubset(of: topLevel), "\(topLevel)")
        for (name, block) in zip(names, blocks.dropFirst()) {
            let offered = Set(block.split(separator: "\n").dropFirst().map(String.init))
            let listed = try Self.optionsInHelp(of: name)
            #expect(!listed.isEmpty && Set(listed).isSubset(of: offered), "\(name): \(listed) vs \(offered)")
        }
    }

    @Test func bashOffersAnOptionsValues() throws {
        let result = try Self.bash("completions countries serve --log-format ''")
        #expect(result.stdout == "text\njson\n", "\(result)")
    }

    /// zsh driven in a pseudo-terminal (zpty): it types a line and a Tab, then runs the completed
    /// line as `print -r -- R:LINE` and waits for that output. Arguments: the directory of
    /// `_countries` (for `fpath`) and the seconds each completion may take.
    static let zshDriver = #"""
        zmodload zsh/zpty
        zpty z 'zsh -f -i'
        zpty -w z "fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; PROMPT='> '"
        complete_to() {
            zpty -w -n z "$1"$'\t'
            zpty -w z $'\x01'"print -r -- R:"
            local out="" chunk deadline=$((SECONDS + $3))
            while ((SECONDS < deadline)); do
                zpty -r -t z chunk && out+=$chunk
                if [[ $out == *$'\n'"R:$2"[[:space:]]* ]]; then print "ok: $1 -> $2"; return 0; fi
                sleep 0.05
            done
            print -r "FAILED: $1 (wanted $2): ${(q+)out}"; return 1
        }
        complete_to "countries tog" "countries toggle" $2 &&
            complete_to "countries serve --d" "countries serve --db" $2 &&
            complete_to "countries serve --log-format j" "countries serve --log-format json" $2
        result=$?
        zpty -d z
        exit $result
        """#

    /// fish's own completer (`complete -C`), and zsh's completion system in a pseudo-terminal,
    /// each with the script the binary prints.
    @Test func fishAndZshCompleteWithTheirScripts() throws {
        let sandbox = try Sandbox()
        let fishScript = try Countries.run(["completion", "fish"])
        let zshScript = try Countries.run(["completion", "zsh"])
        #expect(fishScript.exitCode == 0 && zshScript.exitCode == 0, "\(fishScript) \(zshScript)")
        try fishScript.stdout.write(toFile: sandbox.file("countries.fish"), atomically: true, encoding: .utf8)
        try zshScript.stdout.write(toFile: sandbox.file("_countries"), atomically: true, encoding: .utf8)
        try Self.zshDriver.write(toFile: sandbox.file("driver.zsh"), atomically: true, encoding: .utf8)
        let fish = try ChildProcess.run(
            "/usr/bin/fish",
            [
                "--no-config", "-c",
                "source \(sandbox.file("countries.fish")); complete -C 'countries tog'; "
                    + "complete -C 'countries serve --d'; complete -C 'countries serve --log-format '",
            ])
        #expect(fish.exitCode == 0 && fish.stderr.isEmpty, "\(fish)")
        let words = fish.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t").first }
        #expect(words == ["toggle", "--db", "json", "text"], "\(fish)")
        let zsh = try ChildProcess.run(
            "/usr/bin/zsh", ["-f", sandbox.file("driver.zsh"), sandbox.path, "\(10 * testSlowdown)"],
            timeout: .seconds(60))
        #expect(zsh.exitCode == 0, "\(zsh)")
        #expect(zsh.stdout.split(separator: "\n").filter { $0.hasPrefix("ok: ") }.count == 3, "\(zsh)")
    }

    @Test func theManPageRendersWithoutWarningsAndListsEverySubcommandAndOption() throws {
        let sandbox = try Sandbox()
        let man = try Countries.run(["man"])
        #expect(man.exitCode == 0 && man.stderr.isEmpty, "\(man)")
        try man.stdout.write(toFile: sandbox.file("countries.1"), atomically: true, encoding: .utf8)
        // -ww: every warning groff has; -z: check, print nothing.
        let check = try ChildProcess.run(
            "/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", sandbox.file("countries.1")])
        #expect(check.exitCode == 0 && check.stderr.isEmpty, "\(check)")
        let rendered = try ChildProcess.run(
            "/usr/bin/groff", ["-man", "-Tutf8", "-P", "-cbou", sandbox.file("countries.1")],
            environment: CountriesBinary.environment(adding: ["LC_ALL": "C.UTF-8"]))
        #expect(rendered.exitCode == 0 && rendered.stderr.isEmpty, "\(rendered)")
        let text = rendered.stdout
        #expect(text.contains("COUNTRIES(1)"))
        for name in try Self.subcommandsInHelp() {
            #expect(text.contains("countries \(name)\n"), "\(name) has no subsection")
            for option in try Self.optionsInHelp(of: name) {
                #expect(text.contains(option), "\(option) of \(name) is not in the man page")
            }
        }
    }

    @Test func anUnknownShellIsAUsageError() throws {
        let result = try Countries.run(["completion", "tcsh"])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("'bash', 'zsh', 'fish'"), "\(result)")
    }

    @Test func installPutsEverythingUnderThePrefixInTheDestdir() throws {
        let scratch = try ScratchDirectory(prefix: "install")
        defer { scratch.remove() }
        let install = try ChildProcess.run(
            CountriesBinary.packageRoot + "/scripts/install",
            ["--prefix", "/opt/countries", "--destdir", scratch.path, "--binary", CountriesBinary.path],
            timeout: .seconds(60))
        #expect(install.exitCode == 0, "\(install)")
        let root = scratch.path + "/opt/countries/"
        #expect(FileManager.default.isExecutableFile(atPath: root + "bin/countries"))
        let version = try ChildProcess.run(root + "bin/countries", ["--version"])
        #expect(version.exitCode == 0 && !version.stdout.isEmpty, "\(version)")
        for (path, shell) in [
            ("share/bash-completion/completions/countries", "bash"),
            ("share/zsh/vendor-completions/_countries", "zsh"),
            ("share/fish/vendor_completions.d/countries.fish", "fish"),
        ] {
            let printed = try Countries.run(["completion", shell]).stdout
            #expect(scratch.read("opt/countries/" + path) == printed, "\(path)")
        }
        let page = try ChildProcess.run("/bin/gzip", ["-dc", root + "share/man/man1/countries.1.gz"])
        let manual = try Countries.run(["man"]).stdout
        #expect(page.exitCode == 0 && page.stdout == manual, "\(page)")
        let unit = scratch.read("opt/countries/lib/systemd/system/countries.service")
        #expect(unit.contains("\nType=notify\n"), "\(unit)")
        #expect(unit.contains("\nExecStart=/opt/countries/bin/countries serve "), "\(unit)")
        // Nothing outside the destdir: every path it printed is under the prefix.
        let printed = install.stdout.split(separator: "\n").filter { $0.hasPrefix("installed ") }
        #expect(
            printed.count == 6 && printed.allSatisfy { $0.hasPrefix("installed /opt/countries/") },
            "\(install)")
        let help = try ChildProcess.run(CountriesBinary.packageRoot + "/scripts/install", ["--help"])
        #expect(help.exitCode == 0 && help.stdout.contains("P/share/man/man1/countries.1.gz"), "\(help)")
    }

    @Test func serveTellsSystemdItIsReadyOnlyOnceItAnswersAndWhenItStops() throws {
        let sandbox = try Sandbox()
        let listener = try NotifySocketListener(address: sandbox.file("notify"))
        let service = try Service(
            in: sandbox, options: ["--db", sandbox.file("countries.db")],
            environment: ["NOTIFY_SOCKET": listener.address], waitUntilReady: false)
        defer { service.stop() }
        #expect(listener.receive(within: .seconds(15)) == "READY=1", "\(service.process.stderrSoFar)")
        // When READY=1 arrives the store is open and the command socket is bound (an ipc
        // endpoint is a file)...
        let endpoint = String(sandbox.commandEndpoint.dropFirst("ipc://".count))
        #expect(FileManager.default.fileExists(atPath: endpoint))
        #expect(FileManager.default.fileExists(atPath: sandbox.file("countries.db")))
        // ...and it answers: one try, no retry, a short wait.
        let count = try Countries.run(["count", "--timeout", "1000", "--retries", "1"] + sandbox.client)
        #expect(count.exitCode == 0, "\(count)")
        let stopped = service.stop()
        #expect(stopped?.exitCode == 0, "\(String(describing: stopped))")
        #expect(listener.receive(within: .seconds(5)) == "STOPPING=1")
        #expect(listener.receive(within: .milliseconds(100)) == nil)
    }

    @Test func serveThatCannotOpenItsStoreNeverSaysReady() throws {
        let sandbox = try Sandbox()
        let listener = try NotifySocketListener(
            address: "@countries-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let service = try Service(
            in: sandbox, options: ["--db", sandbox.file("missing/dir/countries.db")],
            environment: ["NOTIFY_SOCKET": listener.address], waitUntilReady: false)
        defer { service.stop() }
        #expect(service.process.waitForExit(timeout: .seconds(15)))
        #expect(service.process.exitStatus != 0)
        #expect(listener.receive(within: .milliseconds(200)) == nil)
    }
}
