import ArgumentParsing
import CountriesCore
import CountriesService
import Foundation
@preconcurrency import Glibc
import SystemSupport

/// `countries serve`: run the state service until SIGINT or SIGTERM.
struct ServeCommand {
    let command: ParsedCommand

    func run() throws -> Int32 {
        guard let levelName = command.value("log-level"), let level = LogLevel(name: levelName) else {
            throw command.usageError("--log-level must be debug, info, warning or error")
        }
        guard let heartbeat = try command.int("heartbeat-ms"), heartbeat >= 10, heartbeat <= 3_600_000 else {
            throw command.usageError("--heartbeat-ms must be between 10 and 3600000")
        }
        var configuration = ServiceConfiguration()
        configuration.commandEndpoint = command.value("command") ?? configuration.commandEndpoint
        configuration.eventsEndpoint = command.value("events") ?? configuration.eventsEndpoint
        configuration.storePath = command.flag("in-memory") ? nil : (command.value("db") ?? "countries.db")
        configuration.heartbeatInterval = .milliseconds(heartbeat)
        configuration.version = CountriesCommandLine.version
        configuration.seed = try seed(command.value("seed") ?? "default")

        // libzmq unlinks an ipc socket file before it binds, so a second service would silently
        // take the endpoint from a live one; refuse as a busy tcp port is refused.
        for (role, endpoint) in [
            ("command", configuration.commandEndpoint), ("events", configuration.eventsEndpoint),
        ] where ServeCommand.isLiveUnixSocket(endpoint) {
            throw CommandFailure(
                message:
                    "cannot bind the \(role) endpoint \(endpoint): Address already in use; another process (perhaps another countries serve) is using it; stop it or pick another path",
                exitCode: ExitCode.unavailable)
        }

        let logger = Logger(level: level)
        let signals = try SignalPipe(signals: [SIGINT, SIGTERM])
        let service: StateService
        do {
            service = try StateService(configuration: configuration, logger: logger)
        } catch {
            throw CommandFailure(
                message: error.message,
                exitCode: error.code == .store ? ExitCode.ioError : ExitCode.unavailable)
        }
        do {
            try service.run(stopOn: signals)
        } catch {
            throw CommandFailure(message: error.message, exitCode: ExitCode.software)
        }
        return ExitCode.success
    }

    /// True when `endpoint` is `ipc://PATH` and a process accepts connections on PATH. A stale
    /// socket file left by a crash refuses the connection: it is not live and is reused.
    static func isLiveUnixSocket(_ endpoint: String) -> Bool {
        let prefix = "ipc://"
        guard endpoint.hasPrefix(prefix) else { return false }
        let path = Array(endpoint.dropFirst(prefix.count).utf8)
        // `ipc://@name` is Linux's abstract namespace: there bind itself reports EADDRINUSE.
        guard !path.isEmpty, path.first != UInt8(ascii: "@") else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
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
