import ArgumentParsing
import CountriesCore
import CountriesOptions
import CountriesService
@preconcurrency import Glibc
import SystemSupport

/// `countries relay`: fan-out across hosts (``Relay``).
struct RelayCommand: Subcommand {
    static let name = "relay"
    static let abstract = "Forward the event stream to more subscribers (XSUB/XPUB proxy)."
    static let discussion: String? = """
        Subscribers point --events at the relay and --command at the service. With --curve-key the \
        relay requires CURVE from its subscribers (--allow/--allow-read), and with --server-key it \
        also uses its key toward a CURVE upstream, whose allow-list must hold the relay's .pub.
        """

    typealias Options = RelayOptions
    static var options: Options { Options() }

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
        do {
            try Relay(configuration, logger: Logger(level: command[\.logLevel])).run(stopOn: signals)
        } catch {
            let exitCode: Int32
            switch error.code {
            case .security: exitCode = ExitCode.config
            case .unsafeEndpoint: exitCode = ExitCode.usage
            case .store, .storeInUse, .bind, .sockets: exitCode = ExitCode.unavailable
            }
            throw CommandFailure(message: error.message, exitCode: exitCode)
        }
        return ExitCode.success
    }
}
