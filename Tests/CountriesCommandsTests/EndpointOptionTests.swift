import ArgumentParsing
import Testing

@testable import CountriesCommands

/// Every endpoint option is checked before anything connects or binds (issue 24).
@Suite struct EndpointOptionTests {
    static let parser = CommandLineParser(root: CountriesCommandLine.root, version: "test")

    /// An endpoint without a transport is a usage error that names the one meant, for every
    /// endpoint option.
    @Test(arguments: [
        (
            ["list", "--command", "127.0.0.1:5555"],
            "--command: 127.0.0.1:5555 has no transport; did you mean tcp://127.0.0.1:5555?"
        ),
        (
            ["events", "--events", "localhost:5556"],
            "--events: localhost:5556 has no transport; did you mean tcp://localhost:5556?"
        ),
        (
            ["watch", "--command", "ipc:///a,/tmp/b.sock"],
            "--command: /tmp/b.sock has no transport; did you mean ipc:///tmp/b.sock?"
        ),
        (["serve", "--events", "*:5556"], "--events: *:5556 has no transport; did you mean tcp://*:5556?"),
        (
            ["relay", "--from", "10.0.0.1:5556"],
            "--from: 10.0.0.1:5556 has no transport; did you mean tcp://10.0.0.1:5556?"
        ),
        (
            ["relay", "--bind", "htp://x:1"],
            "--bind: htp://x:1 has an unknown transport 'htp'; use tcp://, ipc:// or inproc://"
        ),
    ])
    func anEndpointWithoutATransportIsAUsageError(arguments: [String], message: String) {
        #expect {
            guard case .run(let parsed) = try Self.parser.parse(arguments, environment: [:]) else { return }
            _ = try CountriesCommandLine.registry.make(parsed)
        } throws: { error in
            (error as? UsageError)?.message == message
        }
    }

    /// `list` ignores --events, so any value passes there (ConnectionOptions).
    @Test func aRequestCommandIgnoresItsEventsOption() throws {
        guard case .run(let parsed) = try Self.parser.parse(["list", "--events", "x:1"], environment: [:])
        else {
            Issue.record("list did not parse")
            return
        }
        _ = try CountriesCommandLine.registry.make(parsed)
    }
}
