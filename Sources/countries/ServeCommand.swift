import ArgumentParsing
import CountriesOptions
import CountriesReplication
import CountriesService
import Foundation
@preconcurrency import Glibc
import Metrics
import SystemSupport

/// `countries serve`: run the state service until SIGINT or SIGTERM.
struct ServeCommand: ServeDeclaration {

    typealias Options = ServeOptions

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        var configuration = ServiceConfiguration()
        configuration.commandEndpoint = command[\.command]
        configuration.eventsEndpoint = command[\.events]
        let inMemory = try command.inMemory()
        configuration.storePath = inMemory ? nil : command[\.db]
        if let endpoints = command[\.etcd] {
            if inMemory {
                throw command.usageError("--in-memory and --etcd are two different stores; give one")
            }
            configuration.etcd = EtcdConfiguration(
                endpoints: endpoints, prefix: command[\.etcdPrefix], replicaName: command[\.replicaName] ?? ""
            )
        }
        // Checked with or without --etcd, so a TLS flag given alone is a usage error.
        let etcdSecurity = try command.etcdSecurity(
            environmentPassword: ProcessInfo.processInfo.environment["COUNTRIES_ETCD_PASSWORD"])
        configuration.etcd?.security = etcdSecurity
        configuration.heartbeatInterval = command[\.heartbeat]
        configuration.version = CountriesCommandLine.version
        do {
            configuration.seed = try command.seedList()
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.dataError)
        }
        configuration.allowsInsecureEndpoints = command[\.insecure]
        configuration.security = try command.serverSecurity()
        let pidFilePath = try command.pidFilePath()

        let logger = Logger(level: command[\.logLevel], format: command[\.logFormat])
        // SIGHUP reloads the allow-lists; SIGINT and SIGTERM stop the service.
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP])
        // Claimed before the store is opened, so a second service with the same pid file
        // touches nothing; removed at any exit but SIGKILL (whose stale file the next one takes).
        let pidFile: PidFile?
        do {
            pidFile = try pidFilePath.map(PidFile.claim)
        } catch {
            throw CommandFailure(message: "\(error)", exitCode: ExitCode.cantCreate)
        }
        defer { pidFile?.release() }
        let metrics = try MetricsListener<ServiceMetrics>.start(
            command[\.metrics], insecure: command[\.insecure], logger: logger, usageError: command.usageError)
        defer { metrics?.stop() }
        let service: StateService
        do {
            service = try StateService(configuration: configuration, logger: logger, metrics: metrics?.board)
        } catch {
            let exitCode: Int32
            switch error.code {
            case .store: exitCode = ExitCode.ioError
            case .security: exitCode = ExitCode.config
            case .unsafeEndpoint: exitCode = ExitCode.usage
            case .bind, .sockets: exitCode = ExitCode.unavailable
            case .storeInUse: exitCode = ExitCode.cantCreate
            }
            throw CommandFailure(message: error.message, exitCode: exitCode)
        }
        // Under systemd (Type=notify): ready once it answers, stopping as it begins to stop.
        let notifier = ServiceNotifier(environment: ProcessInfo.processInfo.environment)
        let tell = { (state: String) in
            do {
                try notifier?.notify(state)
            } catch {
                logger.log(.warning, "\(error)")
            }
        }
        do {
            try service.run(
                stopOn: signals, whenServing: { tell(ServiceNotifier.ready) },
                whenStopping: { tell(ServiceNotifier.stopping) })
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.software)
        }
        return ExitCode.success
    }
}
