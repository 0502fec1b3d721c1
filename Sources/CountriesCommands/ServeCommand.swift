import ArgumentParsing
import CountriesReplication
import CountriesService
import Foundation
@preconcurrency import Glibc
import Metrics
import SystemSupport

/// `countries serve`: run the state service until SIGINT or SIGTERM. Its options are many, so
/// they have a file of their own (``ServeOptions``).
struct ServeCommand: Subcommand {
    static let name = "serve"
    static let abstract = "Run the state service."
    static let discussion: String? = """
        Owns the list, answers commands on the command endpoint and publishes every change on the \
        event endpoint. Stops cleanly on SIGINT or SIGTERM.
        """
    static var options: ServeOptions { ServeOptions() }

    let command: ParsedValues<ServeOptions>

    func run() throws -> Int32 {
        var configuration = ServiceConfiguration()
        configuration.commandEndpoint = command[\.command]
        configuration.eventsEndpoint = command[\.events]
        // Bound twice, the second bind failed as "in use by another process".
        if configuration.commandEndpoint == configuration.eventsEndpoint {
            throw command.usageError(
                "--command and --events are both \(configuration.commandEndpoint); give each its own, such as tcp://127.0.0.1:5555 and tcp://127.0.0.1:5556"
            )
        }
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
        configuration.seed = try command.seedList()
        configuration.allowsInsecureEndpoints = command[\.insecure]
        configuration.security = try command.serverSecurity()
        let pidFilePath = try command.pidFilePath()

        let logger = Logger(level: command[\.logLevel], format: command[\.logFormat])
        // SIGHUP reloads the allow-lists; SIGINT and SIGTERM stop the service.
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP])
        // Claimed before the store is opened, so a second service with the same pid file
        // touches nothing; removed at any exit but SIGKILL (whose stale file the next one takes).
        let pidFile = try pidFilePath.map(PidFile.claim)
        defer { pidFile?.release() }
        let metrics = try MetricsListener<ServiceMetrics>.start(
            command[\.metrics], insecure: command[\.insecure], logger: logger, usageError: command.usageError)
        defer { metrics?.stop() }
        let service = try StateService(configuration: configuration, logger: logger, metrics: metrics?.board)
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
            // A store whose files moved under the service ends it as one that cannot be opened
            // (74). Otherwise, once serving, a failure is not the setup's (whose ServiceError
            // codes say what to fix).
            if error.code == .store { throw error }
            throw CommandError.serviceStopped(error)
        }
        return ExitCode.success
    }
}
