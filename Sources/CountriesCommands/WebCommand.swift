import ArgumentParsing
import CountriesClient
import CountriesViews
import CountriesWeb
import Foundation
@preconcurrency import Glibc
import HTTPServer
import SystemSupport

/// `countries web`: the live table in browsers (``WebView``), one more subscriber like `watch`.
struct WebCommand: Subcommand {
    static let name = "web"
    static let abstract = "Serve the live table to browsers; a click toggles."
    static let discussion: String? = """
        One page at /, its changes pushed as Server-Sent Events (/events), toggles posted to /toggle. \
        Loopback only unless --insecure; with --token FILE a page must be opened with ?token=TOKEN. \
        Runs until interrupted.
        """
    static var options: Options { Options(name: name) }

    /// The options of `countries web`.
    struct Options: SubscriberOptions {
        let listen = Option(
            "listen", value: "host:port", help: "Where browsers connect (an IP address and a port).",
            default: "127.0.0.1:8080", environment: "COUNTRIES_LISTEN"
        ).map { (text, command) throws(UsageError) -> WebListenAddress in
            guard let address = WebListenAddress(text) else {
                throw command.usageError(
                    "--listen takes HOST:PORT with an IP address, like 127.0.0.1:8080 or [::1]:8080")
            }
            return address
        }
        let token = Option(
            "token", value: "file",
            help:
                "A private file (mode 0600) whose first line every page must present: open the page once with ?token=..., and it is kept in a cookie.",
            environment: "COUNTRIES_TOKEN")
        let insecure = Option(
            flag: "insecure",
            help: "Allow a --listen that is not loopback (anyone who reaches it sees the list).",
            environment: "COUNTRIES_INSECURE")
        let allowHost = Option(
            repeating: "allow-host", value: "name",
            help:
                "A host name pages may use besides IP addresses and localhost (repeatable); any other name in Host is refused (DNS rebinding).",
            environment: "COUNTRIES_ALLOW_HOST"
        ).map { (names, command) throws(UsageError) -> [String] in
            for name in names where WebRequestGuard.hostName(ofAuthority: name) != name.lowercased() {
                throw command.usageError(
                    "--allow-host takes a host name without a port, like countries.example; not \(name)")
            }
            return names
        }
        let connectionsPerAddress = Option(
            integer: "connections-per-address", value: "n",
            help:
                "The most connections one client may hold, an IPv4 address or an IPv6 /64 (each open page holds one); raise it for pages behind a proxy.",
            default: 256, environment: "COUNTRIES_CONNECTIONS_PER_ADDRESS"
        ).map { (count, command) throws(UsageError) -> Int in
            guard count >= 1 else { throw command.usageError("--connections-per-address must be at least 1") }
            return count
        }
        let heartbeat = CommonOptions.heartbeat
        let logLevel = CommonOptions.logLevel
        let logFormat = CommonOptions.logFormat
        let connection: ConnectionOptions

        /// The options of the subcommand called `name`.
        init(name: String) { connection = .subscriber(name) }
    }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        let listen = command[\.listen]
        if !listen.isLoopback, !command[\.insecure] {
            throw command.usageError(
                "--listen \(listen.authority(port: listen.port)) is not loopback: anyone who reaches it sees the list and can toggle it; pass --insecure (and --token FILE) to allow it",
                about: "listen")
        }
        let token = try command[\.token].map { path in
            // The token is a secret like a key: a file others may read (or replace) is refused.
            try PrivateFiles.checkSecretKey(path)
            guard let token = WebToken.read(from: path) else {
                throw command.usageError(
                    "--token: cannot read a token from \(path): give a file whose first line is the token",
                    about: "token")
            }
            guard token.count >= WebToken.minimumLength else {
                throw command.usageError(
                    "--token: the token in \(path) is \(token.count) characters, too few to resist guessing; give at least \(WebToken.minimumLength) random ones (od -An -tx1 -N16 /dev/urandom | tr -d ' \\n' > \(path))",
                    about: "token")
            }
            return token
        }
        let setup = try SubscriberSetup(command)
        let toggles = PendingRequests<WebToggleAnswer>(
            context: setup.context, endpoints: setup.options.commandEndpoints, timeout: setup.options.timeout,
            tries: setup.options.tries, security: setup.options.security)
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP])
        let view = try WebView(
            subscription: setup.subscription, toggles: toggles, listen: listen, token: token,
            guard: WebRequestGuard(allowedNames: command[\.allowHost], changeToken: WebToken.fresh()),
            limits: HTTPServer.Limits(connectionsPerAddress: command[\.connectionsPerAddress]),
            signals: signals, logger: Logger(level: command[\.logLevel], format: command[\.logFormat]))
        Output.error("serving the table at \(view.address)")
        try view.run(signals: signals)
        return ExitCode.success
    }
}
