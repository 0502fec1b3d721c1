import ArgumentParsing
import CountriesCore
import CountriesService
import Foundation
@preconcurrency import Glibc
import SystemSupport

/// `countries serve`: run the state service until SIGINT or SIGTERM.
struct ServeCommand: Subcommand {
    static let name = "serve"
    static let abstract = "Run the state service."
    static let discussion: String? = """
        Owns the list, answers commands on the command endpoint and publishes every change on the \
        event endpoint. Stops cleanly on SIGINT or SIGTERM.
        """

    struct Options: OptionGroup {
        // The service's own defaults (ServiceConfiguration) are the options' defaults.
        private static let defaults = ServiceConfiguration()

        let command = Option(
            "command", value: "endpoint", help: "Where to accept commands (REQ/REP).",
            default: Options.defaults.commandEndpoint, environment: "COUNTRIES_COMMAND")
        let events = Option(
            "events", value: "endpoint", help: "Where to publish events (PUB/SUB).",
            default: Options.defaults.eventsEndpoint, environment: "COUNTRIES_EVENTS")
        let db = Option(
            "db", value: "path",
            help: "The SQLite store (owner-only; one service per store, held by PATH.lock).",
            default: ServiceConfiguration.defaultStorePath)
        let inMemory = Option(
            flag: "in-memory", help: "Keep the state in memory only (lost when the service stops).")
        let seed = Option(
            "seed", value: "list",
            help:
                "The list a new store starts from and `reset` puts back: default, world, or a FILE (JSON array or one name per line).",
            default: "default")
        let heartbeat = Option(
            integer: "heartbeat-ms", value: "ms", help: "Heartbeat period.",
            default: Options.defaults.heartbeatInterval.wholeMilliseconds
        ).map { (milliseconds, command) throws(UsageError) -> Duration in
            guard (10...3_600_000).contains(milliseconds) else {
                throw command.usageError("--heartbeat-ms must be between 10 and 3600000")
            }
            return .milliseconds(milliseconds)
        }
        let logLevel = CommonOptions.logLevel
        let curveKey = Option(
            "curve-key", value: "file",
            help:
                "The service's secret key file: turns on CURVE encryption on both endpoints (needs --allow).")
        let allow = Option(
            repeating: "allow", value: "dir",
            help: "A directory of client .pub keys that may read and change.")
        let allowRead = Option(
            repeating: "allow-read", value: "dir",
            help: "A directory of client .pub keys that may only read and subscribe.")
        let insecure = Option(
            flag: "insecure",
            help:
                "Allow plaintext tcp endpoints that are not loopback (anyone who reaches them can change the list)."
        )
        let logFormat = Option(
            "log-format", value: "format",
            help: "text for people, json (one object per line) for collectors.",
            default: LogFormat.text.rawValue, allowedValues: LogFormat.allCases.map(\.rawValue)
        ).map { format, _ in LogFormat(rawValue: format) ?? .text }
        let pidfile = Option(
            "pidfile", value: "path",
            help:
                "Write the process id here, held while serving (another serve with it exits 73); removed at a clean exit."
        )
    }
    static var options: Options { Options() }

    let command: ParsedValues<Options>

    func run() throws -> Int32 {
        var configuration = ServiceConfiguration()
        configuration.commandEndpoint = command[\.command]
        configuration.eventsEndpoint = command[\.events]
        configuration.storePath = command[\.inMemory] ? nil : command[\.db]
        configuration.heartbeatInterval = command[\.heartbeat]
        configuration.version = CountriesCommandLine.version
        configuration.seed = try seed(command[\.seed])
        configuration.allowsInsecureEndpoints = command[\.insecure]
        configuration.security = try security()

        let logger = Logger(level: command[\.logLevel], format: command[\.logFormat])
        // SIGHUP reloads the allow-lists; SIGINT and SIGTERM stop the service.
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM, SIGHUP])
        // Claimed before the store is opened, so a second service with the same pid file
        // touches nothing; removed at any exit but SIGKILL (whose stale file the next one takes).
        let pidFile: PidFile?
        do {
            pidFile = try command[\.pidfile].map(PidFile.claim)
        } catch {
            throw CommandFailure(message: "\(error)", exitCode: ExitCode.cantCreate)
        }
        defer { pidFile?.release() }
        let service: StateService
        do {
            service = try StateService(configuration: configuration, logger: logger)
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
        do {
            try service.run(stopOn: signals)
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.software)
        }
        return ExitCode.success
    }

    /// CURVE settings from `--curve-key`, `--allow` and `--allow-read`.
    private func security() throws -> ServerSecurity? {
        let readWrite = command[\.allow]
        let readOnly = command[\.allowRead]
        guard let keyPath = command[\.curveKey] else {
            if !readWrite.isEmpty || !readOnly.isEmpty {
                throw command.usageError(
                    "--allow and --allow-read need --curve-key (the service's secret key)")
            }
            return nil
        }
        guard !readWrite.isEmpty || !readOnly.isEmpty else {
            throw command.usageError(
                "--curve-key needs --allow DIR (and/or --allow-read DIR): the client keys to admit")
        }
        return ServerSecurity(
            certificate: try KeyFiles.read(keyPath, wantSecret: true), readWriteDirectories: readWrite,
            readOnlyDirectories: readOnly)
    }

    private func seed(_ name: String) throws -> [Country] {
        switch name {
        case "default": return SeedList.standard
        case "world": return SeedList.world
        default:
            guard let contents = FileManager.default.contents(atPath: name) else {
                throw CommandFailure(
                    message: "cannot read the seed file \(name); give default, world, or a readable file",
                    exitCode: ExitCode.dataError)
            }
            do {
                return try SeedList.parse(contents)
            } catch {
                throw CommandFailure(
                    message: "seed file \(name): \(error.message)", exitCode: ExitCode.dataError)
            }
        }
    }
}
