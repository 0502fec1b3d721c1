import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// Failing fast and saying so (issue 24): subscribers say where they wait, mistakes in the
/// command line are found before anything runs, and a subscriber that prints stops after
/// `--count`. (A refused connection: ConnectionTests.)
@Suite struct FailFastTests {
    /// Before any service: "waiting for EP" once; then live; then, the service gone, stale with
    /// where it waits again. `events`, `on-change` and a piped `watch --json` alike.
    @Test(arguments: [["events"], ["watch", "--json"], ["on-change", "--", "/bin/true"]])
    func subscribersSayWhereTheyWait(_ subcommand: [String]) throws {
        let sandbox = try Sandbox()
        let endpoints = "\(sandbox.commandEndpoint) (events \(sandbox.eventsEndpoint))"
        let (options, trailing) = (subcommand.prefix { $0 != "--" }, subcommand.drop { $0 != "--" })
        let subscriber = try Countries.start(
            Array(options) + sandbox.client + ["--events", sandbox.eventsEndpoint, "--heartbeat-ms", "200"]
                + trailing)
        defer { subscriber.stop(signal: SIGKILL) }
        #expect(
            eventually(within: .seconds(5)) { subscriber.stderrSoFar.contains("waiting for \(endpoints)\n") },
            "\(subscriber.stderrSoFar)")

        let service = try Service(in: sandbox)
        defer { service.stop() }
        #expect(
            eventually(within: .seconds(10)) { subscriber.stderrSoFar.contains("live at seq 0\n") },
            "\(subscriber.stderrSoFar)")
        service.stop()
        #expect(
            eventually(within: .seconds(10)) {
                subscriber.stderrSoFar.contains("stale: ")
                    && subscriber.stderrSoFar.hasSuffix("; waiting for \(endpoints)\n")
            }, "\(subscriber.stderrSoFar)")
        #expect(
            subscriber.stderrSoFar.hasPrefix(
                "countries: waiting for \(endpoints)\ncountries: live at seq 0\n"),
            "said once before the service came: \(subscriber.stderrSoFar)")
    }

    /// `watch --json --count N` prints N lists (the first the one at start) and exits 0;
    /// `events --count N` prints N events and exits 0: no `| head` needed.
    @Test func countEndsAPrintingSubscriber() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let subscribe = sandbox.client + ["--events", sandbox.eventsEndpoint]
        let watch = try Countries.start(["watch", "--json", "--count", "3"] + subscribe)
        defer { watch.stop(signal: SIGKILL) }
        let events = try Countries.start(["events", "--count", "2"] + subscribe)
        defer { events.stop(signal: SIGKILL) }
        #expect(eventually(within: .seconds(10)) { watch.stdoutSoFar.contains(#""seq":0"#) })
        #expect(eventually(within: .seconds(10)) { events.stderrSoFar.contains("live at seq 0") })
        for target in ["France", "Italy", "Spain"] {
            #expect(try service.run(["toggle", target]).exitCode == 0)
        }
        let watched = try watch.finish(timeout: .seconds(10))
        #expect(watched.exitCode == 0, "\(watched)")
        #expect(watched.stdout.split(separator: "\n").map { $0.contains(#""seq":"#) } == [true, true, true])
        #expect(watched.stdout.contains(#""seq":2,"#), "the snapshot and two changes: \(watched)")
        let printed = try events.finish(timeout: .seconds(10))
        #expect(printed.exitCode == 0, "\(printed)")
        #expect(
            printed.stdout == "1  country.changed  2 France [x]\n2  country.changed  3 Italy [x]\n",
            "\(printed)")
    }

    /// On a terminal `watch` is a live table with no lists to count: a typed `--count` is a
    /// usage error, a `COUNTRIES_COUNT` meant for scripts is left alone.
    @Test(.enabled(if: TmuxSession.isAvailable, "needs tmux"))
    func countOnATerminal() throws {
        let sandbox = try SubscriberSandbox()
        defer { sandbox.stopAll() }
        try sandbox.startService()
        let typed = try sandbox.tmux("\(CountriesBinary.path) watch --count 1; echo \"exit $?\"; sleep 60")
        let (refused, screen) = typed.waitForScreen { $0.contains("exit 64") }
        #expect(refused && screen.contains("--count counts printed lists"), "\(screen)")
        let inherited = try sandbox.tmux(
            "COUNTRIES_COUNT=1 \(CountriesBinary.path) watch --heartbeat-ms 100; echo \"exit $?\"; sleep 60")
        let (live, table) = inherited.waitForScreen { $0.contains("live · seq 0") && $0.contains("France") }
        #expect(live, "\(table)")
    }

    /// Mistakes found before anything runs, each a usage error (64) that says what to give.
    @Test(
        arguments: [
            (
                ["list", "--command", "127.0.0.1:5555"], [:],
                "Error: --command: 127.0.0.1:5555 has no transport; did you mean tcp://127.0.0.1:5555?"
            ),
            (
                ["events", "--events", "127.0.0.1:5556"], [:],
                "Error: --events: 127.0.0.1:5556 has no transport; did you mean tcp://127.0.0.1:5556?"
            ),
            (
                ["serve", "--command", "127.0.0.1:5555"], [:],
                "Error: --command: 127.0.0.1:5555 has no transport; did you mean tcp://127.0.0.1:5555?"
            ),
            (
                ["relay", "--bind", "127.0.0.1:5557"], [:],
                "Error: --bind: 127.0.0.1:5557 has no transport; did you mean tcp://127.0.0.1:5557?"
            ),
            (
                ["count"], ["COUNTRIES_COMMAND": "127.0.0.1:5555"],
                "Error: --command: 127.0.0.1:5555 has no transport; did you mean tcp://127.0.0.1:5555? (the value of COUNTRIES_COMMAND)"
            ),
            (
                ["list", "--command", "tcp://127.0.0.1:abc"], [:],
                "Error: --command: tcp://127.0.0.1:abc has no valid port ('abc': a number from 1 to 65535); give tcp://HOST:PORT, such as tcp://127.0.0.1:5555"
            ),
            (
                // The example is the option's own default: an events endpoint is not 5555.
                ["events", "--events", "tcp://localhost"], [:],
                "Error: --events: tcp://localhost has no host and port; give tcp://HOST:PORT, such as tcp://127.0.0.1:5556"
            ),
            (
                ["relay", "--bind", "tcp://127.0.0.1:"], [:],
                "Error: --bind: tcp://127.0.0.1: has no valid port ('': a number from 1 to 65535); give tcp://HOST:PORT, such as tcp://127.0.0.1:5557"
            ),
            (
                ["serve", "--in-memory", "--events", "ipc://"], [:],
                "Error: --events: ipc:// names no socket file; give ipc://PATH"
            ),
            (
                // Failed at the connect or bind before: 64 for a subscriber, 69 for the others.
                ["events", "--events", "ipc:///tmp/" + String(repeating: "x", count: 103)], [:],
                "Error: --events: ipc:///tmp/\(String(repeating: "x", count: 103)) names a socket file of 108 bytes; a Unix socket's path may have at most 107: use a shorter one"
            ),
            (
                ["count", "--command", "ipc:///tmp/" + String(repeating: "x", count: 103)], [:],
                "Error: --command: ipc:///tmp/\(String(repeating: "x", count: 103)) names a socket file of 108 bytes; a Unix socket's path may have at most 107: use a shorter one"
            ),
            (
                ["count"], ["COUNTRIES_COMMAND": "ipc:///tmp/a,,ipc:///tmp/b"],
                "Error: --command \"ipc:///tmp/a,,ipc:///tmp/b\" has an empty endpoint; give one endpoint, or several separated by commas (tcp://10.0.0.1:5555,tcp://10.0.0.2:5555) (the value of COUNTRIES_COMMAND)"
            ),
            (
                ["web"], ["COUNTRIES_LISTEN": "0.0.0.0:18080"],
                "Error: --listen 0.0.0.0:18080 is not loopback: anyone who reaches it sees the list and can toggle it; pass --insecure (and --token FILE) to allow it (the value of COUNTRIES_LISTEN)"
            ),
            (
                ["web", "--token", "/nonexistent"], [:],
                "Error: --token: cannot read a token from /nonexistent: give a file whose first line is the token"
            ),
            (
                ["count"], ["COUNTRIES_TIMEOUT": "2s"],
                "Error: The value '2s' is invalid for '--timeout <ms>' (the value of COUNTRIES_TIMEOUT)"
            ),
            (
                ["serve", "--db", "a.db", "--in-memory"], [:],
                "Error: --in-memory and --db are two different stores; give one"
            ),
            (
                [
                    "serve", "--in-memory", "--command", "tcp://127.0.0.1:5555", "--events",
                    "tcp://127.0.0.1:5555",
                ],
                [:],
                "Error: --command and --events are both tcp://127.0.0.1:5555; give each its own, such as tcp://127.0.0.1:5555 and tcp://127.0.0.1:5556"
            ),
            (
                ["toggle", "France", "Italy", "--if-seq", "4"], [:],
                "Error: --if-seq 4 holds for one change, and this command sends 2; give one target per command"
            ),
            (
                ["toggle", "France", "99999999999999999999"], [:],
                "Error: index 99999999999999999999 is out of range (a list has at most 10000 rows); pass --by-name for a country of that name"
            ),
        ] as [([String], [String: String], String)])
    func mistakesAreUsageErrors(arguments: [String], environment: [String: String], message: String) throws {
        let sandbox = try Sandbox()
        let run = try Countries.run(
            arguments, environment: environment.merging(["HOME": sandbox.path]) { $1 })
        #expect(run.exitCode == 64, "\(run)")
        #expect(run.stderr.hasPrefix(message + "\n"), "\(run)")
        #expect(run.stderr.contains("\nUsage: countries \(arguments[0])"), "the usage line follows: \(run)")
        #expect(run.stdout.isEmpty, "\(run)")
    }

    /// An argument that is not UTF-8 (a script in Latin-1) is refused, naming its bytes: Swift
    /// repaired it with U+FFFD, and `add` stored "Fr\u{FFFD}nce" as the name asked for.
    @Test func anArgumentThatIsNotUTF8IsAUsageError() throws {
        let sandbox = try Sandbox()
        // A Swift child process takes its arguments as Strings: the shell makes the bytes.
        let run = try ChildProcess.run(
            "/bin/sh",
            ["-c", #""$0" add "$(printf 'Fr\351nce')" --command "$1""#, CountriesBinary.path]
                + [sandbox.client[1]])
        #expect(run.exitCode == 64, "\(run)")
        #expect(
            run.stderr.hasPrefix(
                "Error: argument 2 (Fr\\xE9nce) is not valid UTF-8; give names and paths in UTF-8"),
            "\(run)")
        #expect(run.stderr.contains("\nUsage: countries add "), "\(run)")
    }

    /// A program that is not there fails `on-change` at start, as a shell would (127), naming
    /// it; a directory is not executable (126).
    @Test func onChangeWithAMissingProgramFailsAtStart() throws {
        let sandbox = try Sandbox()
        let missing = try Countries.run(["on-change"] + sandbox.client + ["--", "/nonexistent"])
        #expect(missing.exitCode == 127, "\(missing)")
        #expect(
            missing.stderr
                == "countries: on-change: /nonexistent: no such file; give the path of a program or script to run for each change\n",
            "\(missing)")
        let directory = try Countries.run(["on-change"] + sandbox.client + ["--", sandbox.path])
        #expect(directory.exitCode == 126, "\(directory)")
        #expect(directory.stderr.contains("\(sandbox.path) is not an executable file"), "\(directory)")
    }

    /// A store where no file can be made (/proc/sys exists, but takes no new files): the real
    /// cause, not "the directory does not exist".
    @Test func aStoreWhereNoFileCanBeMadeNamesTheCause() throws {
        let sandbox = try Sandbox()
        let run = try Countries.run(
            [
                "serve", "--db", "/proc/sys/x.db", "--command", sandbox.commandEndpoint, "--events",
                sandbox.eventsEndpoint,
            ],
            timeout: .seconds(10))
        #expect(run.exitCode == 74, "\(run)")
        #expect(!run.stderr.contains("does not exist"), "\(run)")
        #expect(run.stderr.contains("No such file or directory, though /proc/sys exists"), "\(run)")
    }

    /// Configuration from the environment: the service's endpoints, store and log level; a
    /// client's timeout and retries; a flag on the command line wins over its variable.
    @Test func theEnvironmentConfiguresServiceAndClient() throws {
        let sandbox = try Sandbox()
        let serve = try Countries.start(
            ["serve"],
            environment: [
                "COUNTRIES_COMMAND": sandbox.commandEndpoint, "COUNTRIES_EVENTS": sandbox.eventsEndpoint,
                "COUNTRIES_DB": sandbox.file("env.db"), "COUNTRIES_LOG_LEVEL": "warning",
                "COUNTRIES_SEED": "world",
            ])
        defer { serve.stop() }
        let client = ["COUNTRIES_COMMAND": sandbox.commandEndpoint]
        #expect(
            eventually(within: .seconds(10)) {
                // The world list, not the default eight.
                (try? Countries.run(["count"], environment: client))?.stdout == "\(SeedList.world.count)\n"
            },
            "\(serve.stderrSoFar)")
        #expect(FileManager.default.fileExists(atPath: sandbox.file("env.db")))
        #expect(!serve.stderrSoFar.contains(" info: "), "warning and above only: \(serve.stderrSoFar)")
        let json = try Countries.run(["count"], environment: client.merging(["COUNTRIES_JSON": "1"]) { $1 })
        #expect(json.stdout.hasPrefix(#"{"#), "\(json)")

        // A service that never answers: the budget comes from the environment, or the command line.
        let silent = try ZMTPListener(path: sandbox.file("silent"))
        let budget = [
            "COUNTRIES_COMMAND": "ipc://" + silent.path, "COUNTRIES_TIMEOUT": "100", "COUNTRIES_RETRIES": "1",
        ]
        let once = try Countries.run(["count"], environment: budget)
        #expect(once.exitCode == 69 && once.stderr.contains("after 1 try"), "\(once)")
        let twice = try Countries.run(["count", "--retries", "2"], environment: budget)
        #expect(twice.exitCode == 69 && twice.stderr.contains("after 2 tries"), "\(twice)")
    }
}
