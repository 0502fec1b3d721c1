import ArgumentParsing
import CountriesClient
import CountriesOptions
import CountriesViews
import CountriesWeb
import Foundation
@preconcurrency import Glibc
import SystemSupport

/// `countries web`: the live table in browsers (``WebView``), one more subscriber like `watch`.
struct WebCommand: WebDeclaration {
    typealias Options = WebOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        guard let listen = WebListenAddress(command[\.listen]) else {
            throw command.usageError(
                "--listen takes HOST:PORT with an IP address, like 127.0.0.1:8080 or [::1]:8080")
        }
        if !listen.isLoopback, !command[\.insecure] {
            throw command.usageError(
                "--listen \(command[\.listen]) is not loopback: anyone who reaches it sees the list and can toggle it; pass --insecure (and --token FILE) to allow it"
            )
        }
        var token: String?
        if let path = command[\.token] {
            guard let contents = try? String(contentsOfFile: path, encoding: .utf8),
                let line = contents.split(separator: "\n").first.map({
                    $0.trimmingCharacters(in: .whitespaces)
                }),
                !line.isEmpty
            else {
                throw CommandFailure(
                    message: "cannot read a token from \(path): give a file whose first line is the token",
                    exitCode: ExitCode.usage)
            }
            token = line
        }
        let setup = try SubscriberSetup(command)
        let toggles = PendingRequests<WebToggleAnswer>(
            context: setup.context, endpoints: setup.options.commandEndpoints, timeout: setup.options.timeout,
            tries: setup.options.tries, security: setup.options.security)
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP])
        let view: WebView
        do {
            view = try WebView(
                subscription: setup.subscription, toggles: toggles,
                toggleBudget: setup.options.timeout * setup.options.tries, listen: listen, token: token,
                signals: signals)
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.unavailable)
        }
        Output.error("serving the table at \(view.address)")
        try view.run(signals: signals)
        return ExitCode.success
    }
}
