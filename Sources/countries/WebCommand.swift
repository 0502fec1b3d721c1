import ArgumentParsing
import CountriesClient
import CountriesOptions
import CountriesViews
import CountriesWeb
import Foundation
@preconcurrency import Glibc
import HTTPServer
import SystemSupport

/// `countries web`: the live table in browsers (``WebView``), one more subscriber like `watch`.
struct WebCommand: WebDeclaration {
    typealias Options = WebOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let listen = command[\.listen]
        if !listen.isLoopback, !command[\.insecure] {
            throw command.usageError(
                "--listen \(listen.authority(port: listen.port)) is not loopback: anyone who reaches it sees the list and can toggle it; pass --insecure (and --token FILE) to allow it"
            )
        }
        let token = try command[\.token].map { path in
            // The token is a secret like a key: a file others may read (or replace) is refused.
            do {
                try PrivateFiles.checkSecretKey(path)
            } catch {
                throw CommandFailure(message: "\(error)", exitCode: ExitCode.config)
            }
            guard let token = WebToken.read(from: path) else {
                throw CommandFailure(
                    message: "cannot read a token from \(path): give a file whose first line is the token",
                    exitCode: ExitCode.usage)
            }
            return token
        }
        let setup = try SubscriberSetup(command)
        let toggles = PendingRequests<WebToggleAnswer>(
            context: setup.context, endpoints: setup.options.commandEndpoints, timeout: setup.options.timeout,
            tries: setup.options.tries, security: setup.options.security)
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP])
        let view: WebView
        do {
            view = try WebView(
                subscription: setup.subscription, toggles: toggles, listen: listen, token: token,
                guard: WebRequestGuard(allowedNames: command[\.allowHost], changeToken: WebToken.fresh()),
                limits: HTTPServer.Limits(connectionsPerAddress: command[\.connectionsPerAddress]),
                signals: signals)
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.unavailable)
        }
        Output.error("serving the table at \(view.address)")
        try view.run(signals: signals)
        return ExitCode.success
    }
}
