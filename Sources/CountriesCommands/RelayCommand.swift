import ArgumentParsing
import CountriesCore
import CountriesRelay
@preconcurrency import Glibc
import Metrics
import SystemSupport
import ZeroMQ

/// `countries relay`: fan-out across hosts (``Relay``).
struct RelayCommand: Subcommand {
    static let name = "relay"
    static let abstract = "Forward the event stream to more subscribers (XSUB/XPUB proxy)."
    static let discussion: String? = """
        Subscribers point --events at the relay and --command at the service. With --curve-key the \
        relay requires CURVE from its subscribers (--allow/--allow-read), and with --server-key it \
        also uses its key toward a CURVE upstream, whose allow-list must hold the relay's .pub.
        """
    static var options: Options { Options() }

    /// The options of `countries relay`.
    struct Options: OptionGroup {
        let from = CommonOptions.checkedEndpoints(
            Option(
                "from", value: "endpoint", help: "The event endpoint to follow (a service or a relay).",
                default: Defaults.eventsEndpoint, environment: "COUNTRIES_EVENTS"))
        let bind = CommonOptions.checkedEndpoints(
            Option(
                "bind", value: "endpoint", help: "Where subscribers connect.",
                default: Defaults.relayEndpoint,
                environment: "COUNTRIES_BIND"))
        let curveKey = Option(
            "curve-key", value: "file", help: "The relay's secret key file.",
            environment: "COUNTRIES_CURVE_KEY")
        let serverKey = Option(
            "server-key", value: "file", help: "The upstream's public key file (for a CURVE upstream).",
            environment: "COUNTRIES_SERVER_KEY")
        let allow = Option(
            repeating: "allow", value: "dir", help: "A directory of subscriber .pub keys to admit.",
            environment: "COUNTRIES_ALLOW")
        let allowRead = Option(
            repeating: "allow-read", value: "dir", help: "Same as --allow (a relay only reads).",
            environment: "COUNTRIES_ALLOW_READ")
        let insecure = Option(
            flag: "insecure", help: "Allow a plaintext --bind that is not loopback.",
            environment: "COUNTRIES_INSECURE")
        let logLevel = CommonOptions.logLevel
        let logFormat = CommonOptions.logFormat
        let metrics = CommonOptions.metrics
    }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        var configuration = RelayConfiguration(upstream: command[\.from], downstream: command[\.bind])
        configuration.allowsInsecureEndpoints = command[\.insecure]
        let allowed = command[\.allow] + command[\.allowRead]
        if let keyPath = command[\.curveKey] {
            let certificate = try KeyFiles.read(keyPath, wantSecret: true)
            guard !allowed.isEmpty else {
                throw command.usageError("--curve-key needs --allow DIR: the subscriber keys to admit")
            }
            configuration.security = ServerSecurity(certificate: certificate, readWriteDirectories: allowed)
            if let serverKey = command[\.serverKey] {
                configuration.upstreamServerKey = try KeyFiles.read(serverKey, wantSecret: false).publicKey
            }
        } else if !allowed.isEmpty || command[\.serverKey] != nil {
            throw command.usageError("--allow and --server-key need --curve-key (the relay's secret key)")
        }
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP])
        let logger = Logger(level: command[\.logLevel], format: command[\.logFormat])
        let metrics = try MetricsListener<RelayMetrics>.start(
            command[\.metrics], insecure: command[\.insecure], logger: logger, usageError: command.usageError)
        defer { metrics?.stop() }
        // Its ServiceError (setting up or running) ends the command as ExitCode's table says.
        try Relay(configuration, logger: logger, metrics: metrics?.board).run(stopOn: signals)
        return ExitCode.success
    }
}
