import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Every command README.md prints runs as printed (issue 10), in README order, against a live
/// service on the README's own default ports, inside a network namespace of the test's own.
///
/// The commands come from README.md itself (``ReadmeCommand/extract(from:)``), and each one must
/// have a plan in ``ReadmeTests/plans``: a command the README gains or changes without one here
/// fails the test, and so does a plan for a command the README no longer prints.
@Suite(
    .serialized,
    .enabled(
        if: FaultEnvironment.canCreateNamespaces,
        "skipped: network namespaces cannot be created here (needs root or CAP_NET_ADMIN and ip(8))")
)
struct ReadmeTests {
    /// What the test does with one README command.
    enum Plan: Sendable {
        /// Run it to the end: this exit code, and the output the README shows under it.
        case run(exit: Int32)
        /// An `export` line: it is put before the later lines of its block.
        case export
        /// A service on the default ports: it replaces the one before (same ports) and keeps
        /// serving the commands after it, once its log shows `ready`.
        case service(ready: String)
        /// `scripts/serve`: bootstrap, a release build, then `exec countries serve`. The build is
        /// not run in a test; the script is checked, and `countries serve` runs in its place.
        case scriptsServe
        /// Runs until Ctrl-C: started, `trigger` (a command of the test's own) run, its output
        /// must show `expect` (or the README's shown output), then Ctrl-C; a lone command exits 0.
        case follow(trigger: String?, expect: String?)
        /// Like `follow`, for a one-off service or relay: started, `ready` awaited, a `check`
        /// (a command of the test's own) must exit 0, then Ctrl-C and exit 0.
        case startStop(ready: String, check: String?)
        /// A terminal view: run in tmux, `expect` must be on the screen.
        case terminal(expect: String)
        /// A synopsis with placeholders: `countries SUBCOMMAND --help` must list every option
        /// named.
        case synopsis
        /// Not run, and why; the script is still checked (`bash -n`, executable).
        case skip(String)
    }

    static let buildsOrInstalls =
        "builds (a release build or the test suites) or installs packages: minutes, and not in a test"

    /// Every command README.md prints, with what the test does with it. Keys are the commands
    /// exactly as printed (an inline span's line breaks as single spaces).
    static let plans: [String: Plan] = [
        "countries serve": .service(ready: "serving commands on tcp://127.0.0.1:5555"),
        "scripts/demo": .skip("opens tmux and attaches; Tests/examples/test_examples.sh runs --detach"),
        "scripts/demo      # installs what is missing, builds, and opens the demo in tmux":
            .skip("opens tmux and attaches; Tests/examples/test_examples.sh runs --detach"),
        "scripts/demo --stop": .run(exit: 0),
        "scripts/demo --help": .run(exit: 0),
        "scripts/serve": .scriptsServe,
        "scripts/bootstrap": .skip("installs packages with apt-get"),
        "scripts/web-screenshot": .skip("drives headless chromium; scripts/test runs the same browser test"),
        "scripts/test      # installs what is missing, builds, and runs every test (what CI runs)":
            .skip("the test suite itself"),
        "scripts/test --sanitize   # integration suites under ASan, then TSan (CI too)":
            .skip("the test suite itself, under sanitizers"),
        "scripts/test --sanitize --end-to-end   # and the end-to-end suites: 20 minutes or more, by hand":
            .skip("the test suite itself, under sanitizers"),
        "countries list": .run(exit: 0),
        "countries toggle France": .run(exit: 0),
        "countries toggle 12": .run(exit: 1),
        "countries list --json | jq -c '.countries[2]'": .run(exit: 0),
        "countries events            # follows every change until Ctrl-C":
            .follow(trigger: "countries toggle Italy", expect: nil),
        "countries watch": .follow(trigger: nil, expect: "Romania"),
        "countries watch | tee log": .follow(trigger: nil, expect: "Romania"),
        "countries select": .terminal(expect: "live · seq"),
        "countries web": .synopsis,
        "countries web                     # serves http://127.0.0.1:8080/ until Ctrl-C": .startStop(
            ready: "serving the table at http://127.0.0.1:8080/", check: nil),
        "countries on-change -- COMMAND [ARGS...]": .synopsis,
        "countries toggle France --id ID": .synopsis,
        "countries on-change --cursor FILE -- COMMAND [ARGS...]": .synopsis,
        "export COUNTRIES_COMMAND=tcp://127.0.0.1:5555 COUNTRIES_EVENTS=tcp://127.0.0.1:5556": .export,
        "countries watch                                 # another live table":
            .follow(trigger: nil, expect: "Romania"),
        "countries on-change -- sh -c 'echo \"$COUNTRY_NAME is now visited=$COUNTRY_VISITED\"'":
            .follow(trigger: "countries toggle Spain", expect: "Spain is now visited=true"),
        "countries serve --command tcp://192.0.2.10:5555 --events tcp://192.0.2.10:5556 --insecure":
            .startStop(
                ready: "serving commands on", check: "countries count --command tcp://192.0.2.10:5555"),
        "countries list --events tcp://127.0.0.1:5556": .run(exit: 0),
        // Replicas: nothing listens on 5565, so the count fails over to the service on 5555.
        "export COUNTRIES_COMMAND=tcp://127.0.0.1:5565,tcp://127.0.0.1:5555": .export,
        "export COUNTRIES_EVENTS=tcp://127.0.0.1:5566,tcp://127.0.0.1:5556": .export,
        "countries count              # asks 5565 first; when it does not answer, 5555": .run(exit: 0),
        "countries serve [--command EP] [--events EP] [--db PATH | --in-memory] [--seed default|world|FILE] [--heartbeat-ms N] [--log-level LEVEL]":
            .synopsis,
        "countries serve --pidfile countries.pid --log-format json": .service(ready: "serving commands on"),
        "countries status": .run(exit: 0),
        // Backup and restore: the copy of the tour's store (countries.db in the walk's
        // directory), put in its place, served as a new store by the plain `countries serve`.
        "countries backup FILE": .synopsis,
        "countries backup backup.db      # while the service runs: prints the seq it copied": .run(exit: 0),
        "rm -f countries.db-wal countries.db-shm && mv backup.db countries.db": .run(exit: 0),
        "countries backup": .synopsis,
        "countries relay --from tcp://SERVICE:5556 --bind tcp://0.0.0.0:5557 --insecure":
            .startStop(
                ready: "relaying",
                check:
                    "countries events --events tcp://192.0.2.10:5557 --count 1 & sleep 1; countries toggle Moldova; wait $!"
            ),
        "countries keygen server                  # server.key (secret, 0600) and server.pub": .run(exit: 0),
        "countries keygen alice                   # a client's pair; alice.pub goes to the service":
            .run(exit: 0),
        "mkdir clients && cp alice.pub clients/": .run(exit: 0),
        "countries serve --curve-key server.key --allow clients/ --db secure.db   # until Ctrl-C":
            .service(ready: "serving commands on"),
        "countries list --curve-key alice.key --server-key server.pub": .run(exit: 0),
        // Replicated mode: scripts/cluster for real in the namespace (on the built binary, a few
        // seconds), a third replica joining it, and the cluster stopped by pid.
        "scripts/cluster up        # waits until all answer, then prints the --etcd, --command and --events lists":
            .run(exit: 0),
        "countries toggle France --command tcp://127.0.0.21:5555,tcp://127.0.0.22:5555": .run(exit: 0),
        "countries watch --command tcp://127.0.0.21:5555,tcp://127.0.0.22:5555 --events tcp://127.0.0.21:5556,tcp://127.0.0.22:5556":
            .follow(trigger: "countries toggle Spain --command tcp://127.0.0.22:5555", expect: "Spain"),
        "countries serve --etcd http://127.0.0.11:2379,http://127.0.0.12:2379,http://127.0.0.13:2379 --command tcp://127.0.0.23:5555 --events tcp://127.0.0.23:5556":
            .startStop(
                ready: "serving commands on", check: "countries count --command tcp://127.0.0.23:5555"),
        "scripts/cluster down      # stops every process by pid and removes the state": .run(exit: 0),
        // An inline span, so it comes after the fenced commands: the cluster is down by then.
        "scripts/cluster status": .run(exit: 3),
        "scripts/demo --ha": .skip(
            "opens tmux and attaches; Tests/examples/test_examples.sh runs --ha --detach"),
        "scripts/chaos": .skip(buildsOrInstalls + "; runs fault scenarios for minutes"),
        "scripts/soak": .skip(buildsOrInstalls + "; runs for minutes"),
        "scripts/fuzz": .skip(buildsOrInstalls + "; runs libFuzzer"),
        "scripts/bench": .skip(buildsOrInstalls + "; runs benchmarks"),
        "scripts/bench --runs 3": .skip(
            buildsOrInstalls + "; runs benchmarks three times (scripts/test runs --quick --runs 2)"),
        "scripts/profile-load OLD NEW": .skip(
            buildsOrInstalls + "; OLD and NEW stand for two builds of countries"),
        "scripts/examples/": .skip("a directory; Tests/examples/test_examples.sh runs every script in it"),
        "scripts/test": .skip("the test suite itself"),
        "scripts/test --sanitize": .skip("the test suite itself, under sanitizers"),
        "scripts/check-docker": .skip("lints with hadolint, which CI installs"),
        "scripts/bootstrap --build-only": .skip("installs packages with apt-get"),
        "scripts/build": .skip(buildsOrInstalls),
        "scripts/install                          # builds, then installs under /usr/local (run it as root)":
            .skip(buildsOrInstalls + "; InstallTests runs it with --destdir and --binary"),
        "scripts/install --prefix \"$HOME/.local\"  # or under your home directory":
            .skip(buildsOrInstalls + "; InstallTests runs it with --destdir and --binary"),
        "scripts/package                          # builds countries_VERSION_ARCH.deb with dpkg-deb":
            .skip(buildsOrInstalls + "; scripts/check-image runs it on the image's binary"),
        "scripts/package": .skip(buildsOrInstalls + "; scripts/check-image runs it on the image's binary"),
        "scripts/install": .skip(buildsOrInstalls + "; InstallTests runs it with --destdir and --binary"),
        "scripts/install --help": .run(exit: 0),
        "countries completion zsh": .run(exit: 0),
        "countries completion fish": .run(exit: 0),
        "countries man": .run(exit: 0),
    ]

    static let packageRoot = URL(fileURLWithPath: ReadmeCommand.readmePath).deletingLastPathComponent().path

    @Test func everyReadmeCommandHasAPlanAndEveryPlanACommand() throws {
        let readme = try String(contentsOfFile: ReadmeCommand.readmePath, encoding: .utf8)
        let commands = ReadmeCommand.extract(from: readme)
        #expect(commands.count >= Self.plans.count, "\(commands.count) commands")
        for command in commands where Self.plans[command.text] == nil {
            Issue.record("\(command): the README test has no plan for it (ReadmeTests.plans)")
        }
        let printed = Set(commands.map(\.text))
        for text in Self.plans.keys where !printed.contains(text) {
            Issue.record("ReadmeTests.plans has \(text), which README.md no longer prints")
        }
    }

    @Test(.hangGuard()) func everyReadmeCommandRunsAsPrinted() throws {
        let readme = try String(contentsOfFile: ReadmeCommand.readmePath, encoding: .utf8)
        let commands = ReadmeCommand.extract(from: readme)
        _ = try #require(FaultTool.path("jq"), "jq is needed (scripts/bootstrap installs it)")
        let host = try ReadmeHost()
        defer { host.remove() }
        let run = try ReadmeRun(host: host)
        defer { run.stopAll() }
        var skipped: [String] = []
        for command in commands {
            guard let plan = Self.plans[command.text] else { continue }  // the other test says so
            if case .skip(let reason) = plan {
                skipped.append("\(command): \(reason)")
                Self.checkScript(command.text, command)
                continue
            }
            try run.perform(command, plan)
        }
        print("README commands not run, and why:\n  " + skipped.joined(separator: "\n  "))
    }

    /// A script the test does not run: it exists, is executable and parses (`bash -n`).
    static func checkScript(_ text: String, _ command: ReadmeCommand) {
        let word = String(text.split(separator: " ").first ?? "")
        let path = packageRoot + "/" + word
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            Issue.record("\(command): \(path) does not exist")
            return
        }
        if isDirectory.boolValue { return }
        #expect(FileManager.default.isExecutableFile(atPath: path), "\(command): not executable")
        let syntax = try? FaultCommand.run("/bin/bash", ["-n", path])
        #expect(syntax?.status == 0, "\(command): bash -n failed: \(syntax.map { "\($0)" } ?? "")")
    }
}

/// The state of one walk through the README: the namespace, a working directory (the
/// README's `./countries.db` lives there), the service that is up, and the `export`s so far.
final class ReadmeRun {
    let host: ReadmeHost
    let directory: FaultTemporaryDirectory
    let environment: [String: String]
    private var service: ReadmeShell?
    /// How the running service was started, to start it again after a one-off service.
    private var serviceStart: (command: ReadmeCommand, ready: String, text: String?)?
    private var exports: [Int: [String]] = [:]

    init(host: ReadmeHost) throws {
        self.host = host
        directory = try FaultTemporaryDirectory()
        // `countries` on PATH, as the README asks; a UTF-8 locale so the ✓ is the README's.
        let bin = directory.path + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            atPath: bin + "/countries", withDestinationPath: CountriesBinary.path)
        var environment = CountriesBinary.environment
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["LANG"] = "C.UTF-8"
        environment["COUNTRIES_DEMO_SESSION"] = "countries-readme-\(getpid())"
        // scripts/cluster runs on the binary under test, its state in this walk's directory.
        environment["COUNTRIES_CLUSTER_BINARY"] = CountriesBinary.path
        environment["COUNTRIES_CLUSTER_DIR"] = directory.path + "/cluster"
        for key in ["COUNTRIES_CURVE_KEY", "COUNTRIES_SERVER_KEY", "COUNTRIES_EVENTS_SERVER_KEY"] {
            environment[key] = nil
        }
        self.environment = environment
    }

    func stopAll() {
        service?.stop()
        service = nil
        // A walk that failed between `scripts/cluster up` and `down` leaves its processes: by pid.
        for name in ["r1", "r2", "m1", "m2", "m3"] {
            let file = directory.path + "/cluster/\(name).pid"
            if let text = try? String(contentsOfFile: file, encoding: .utf8),
                let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                ProcessMemory.runs(pid, commandLineIn: directory.path + "/cluster/\(name).args")
            {
                kill(pid, SIGKILL)
            }
        }
        directory.remove()
    }

    private func shell(_ command: ReadmeCommand, _ text: String? = nil) throws -> ReadmeShell {
        // `trap : INT`: like an interactive shell, the shell outlives a Ctrl-C to the group and
        // exits with the command's status (a plain `sh -c` dies of the SIGINT itself).
        let script = (["trap : INT"] + (command.block.flatMap { exports[$0] } ?? []) + [text ?? command.text])
            .joined(separator: "\n")
        return try host.shell(
            script,
            in: (text ?? command.text).hasPrefix("scripts/") ? ReadmeTests.packageRoot : directory.path,
            environment: environment)
    }

    /// A command of the test's own, in the namespace, to its end.
    private func helper(_ script: String) throws -> (status: Int32?, output: String) {
        let shell = try host.shell(script, in: directory.path, environment: environment)
        return (shell.finish(), shell.output)
    }

    func perform(_ command: ReadmeCommand, _ plan: ReadmeTests.Plan) throws {
        switch plan {
        case .run(let exit):
            let shell = try shell(command)
            let status = shell.finish()
            #expect(status == exit, "\(command): exit \(status.map(String.init) ?? "none"): \(shell.output)")
            if let shown = command.shownOutput {
                #expect(lines(shell.output) == lines(shown.joined(separator: "\n")), "\(command)")
            }
        case .export:
            if let block = command.block { exports[block, default: []].append(command.text) }
        case .service(let ready):
            try startService(command, ready: ready)
            if command.text.contains("--pidfile countries.pid") {
                let pid = try? String(contentsOfFile: directory.path + "/countries.pid", encoding: .utf8)
                #expect(pid.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } != nil)
                let firstLine = service?.process.stderr.lines.first?.text ?? ""
                #expect(faultReply(firstLine) != nil, "\(command): not a JSON log line: \(firstLine)")
            }
        case .scriptsServe:
            let script = try String(
                contentsOfFile: ReadmeTests.packageRoot + "/scripts/serve", encoding: .utf8)
            #expect(script.contains("exec \"$binary\" serve \"$@\""), "scripts/serve no longer runs serve")
            ReadmeTests.checkScript("scripts/serve", command)
            try startService(command, ready: "serving commands on", as: "countries serve")
            if let shown = command.shownOutput, let service {
                #expect(
                    lines(service.output).map(withoutTimestamp)
                        == lines(shown.joined(separator: "\n")).map(
                            withoutTimestamp), "\(command): \(service.output)")
            }
        case .follow(let trigger, let expect):
            let shell = try shell(command)
            defer { shell.stop() }
            if let trigger {
                // Live: a subscriber prints every change after the list it started from.
                #expect(shell.waitFor("live at seq"), "\(command) never went live: \(shell.output)")
                let result = try helper(trigger)
                #expect(result.status == 0, "\(command): \(trigger): \(result.output)")
            }
            let wanted = expect ?? command.shownOutput?.joined(separator: "\n") ?? ""
            #expect(shell.waitFor(wanted), "\(command): wanted \(wanted), got \(shell.output)")
            #expect(shell.process.isRunning, "\(command) stopped by itself: \(shell.output)")
            let status = shell.stop()
            if !command.text.contains("|") {
                #expect(status == 0, "\(command): Ctrl-C gave exit \(status.map(String.init) ?? "none")")
            }
        case .startStop(let ready, let check):
            // A one-off `serve` is another way to run the tour's service, on its store: one
            // writer per store, so the tour's service stops for it and comes back after.
            let replacing = command.text.hasPrefix("countries serve") ? serviceStart : nil
            if replacing != nil, let service {
                #expect(service.stop() == 0, "the service before \(command) did not stop cleanly")
                self.service = nil
            }
            defer {
                if let replacing {
                    try? startService(replacing.command, ready: replacing.ready, as: replacing.text)
                }
            }
            let shell = try shell(command)
            defer { shell.stop() }
            #expect(shell.waitFor(ready), "\(command): \(shell.output)")
            if let check {
                let result = try helper(check)
                #expect(result.status == 0, "\(command): \(check): \(result.output)")
            }
            #expect(shell.stop() == 0, "\(command): \(shell.output)")
        case .terminal(let expect):
            try terminal(command, expect: expect)
        case .synopsis:
            let words = command.text.split(separator: " ").map(String.init)
            let result = try helper("countries \(words[1]) --help")
            #expect(result.status == 0, "\(command): \(result.output)")
            for option in words where option.hasPrefix("[--") || option.hasPrefix("--") {
                let name = option.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                if name == "--" { continue }
                #expect(result.output.contains(name + " "), "\(command): \(name) is not in its --help")
            }
        case .skip:
            break
        }
    }

    /// Stops the service on the default ports, if any, and starts `command` in its place.
    private func startService(_ command: ReadmeCommand, ready: String, as text: String? = nil) throws {
        if let service {
            #expect(service.stop() == 0, "the service before \(command) did not stop cleanly")
        }
        let started = try shell(command, text)
        service = started
        serviceStart = (command, ready, text)
        #expect(started.waitFor(ready), "\(command): \(started.output)")
    }

    /// Runs `command` in a tmux pane (the namespace, the directory) and waits for `expect`.
    private func terminal(_ command: ReadmeCommand, expect: String) throws {
        guard SecurityTmux.isAvailable else {
            Issue.record("\(command): tmux is needed (scripts/bootstrap installs it)")
            return
        }
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let variables = ["PATH", "LANG", "HOME"].compactMap { key in environment[key].map { "\(key)=\($0)" } }
        let line = securityShellQuote(
            [FaultTool.path("ip") ?? "ip", "netns", "exec", host.namespace, "env", "-C", directory.path]
                + variables + ["TERM=xterm-256color", "/bin/sh", "-c", command.text])
        let pane = try SecurityTmux(line, in: workspace)
        defer { pane.kill() }
        #expect(
            eventually(within: .seconds(10)) { pane.capture().contains(expect) }, "\(pane.capture())")
    }

    private func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map {
            String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
    }

    private func withoutTimestamp(_ line: String) -> String {
        line.replacingOccurrences(of: "^\\S+Z ", with: "TIME ", options: .regularExpression)
    }
}
