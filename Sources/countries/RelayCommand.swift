import ArgumentParsing
import CountriesService
@preconcurrency import Glibc
import SystemSupport

/// `countries relay`: fan-out across hosts (``Relay``).
struct RelayCommand {
    let command: ParsedCommand

    func run() throws -> Int32 {
        guard let levelName = command.value("log-level"), let level = LogLevel(name: levelName) else {
            throw command.usageError("--log-level must be debug, info, warning or error")
        }
        var configuration = RelayConfiguration(
            upstream: command.value("from") ?? "tcp://127.0.0.1:5556",
            downstream: command.value("bind") ?? "tcp://127.0.0.1:5557")
        configuration.allowsInsecureEndpoints = command.flag("insecure")
        let allowed = command.values("allow") + command.values("allow-read")
        if let keyPath = command.value("curve-key") {
            let certificate = try KeyFiles.read(keyPath, wantSecret: true)
            guard !allowed.isEmpty else {
                throw command.usageError("--curve-key needs --allow DIR: the subscriber keys to admit")
            }
            configuration.security = ServerSecurity(certificate: certificate, readWriteDirectories: allowed)
            if let serverKey = command.value("server-key") {
                configuration.upstreamServerKey = try KeyFiles.read(serverKey, wantSecret: false).publicKey
            }
        } else if !allowed.isEmpty || command.value("server-key") != nil {
            throw command.usageError("--allow and --server-key need --curve-key (the relay's secret key)")
        }
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP])
        do {
            try Relay(configuration, logger: Logger(level: level)).run(stopOn: signals)
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
