import ArgumentParsing
import CountriesCore
import CountriesOptions
import CountriesRelay
@preconcurrency import Glibc
import Metrics
import SystemSupport
import ZeroMQ

/// `countries relay`: fan-out across hosts (``Relay``).
struct RelayCommand: RelayDeclaration {

    typealias Options = RelayOptions

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
        let logger = Logger(level: command[\.logLevel])
        let metrics = try MetricsListener<RelayMetrics>.start(
            command[\.metrics], insecure: command[\.insecure], logger: logger, usageError: command.usageError)
        defer { metrics?.stop() }
        do {
            try Relay(configuration, logger: logger, metrics: metrics?.board).run(stopOn: signals)
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
