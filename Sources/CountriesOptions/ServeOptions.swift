import ArgumentParsing
import CountriesCore
import CountriesService
import Foundation

/// The options of `countries serve`.
public struct ServeOptions: OptionGroup {
    // The service's own defaults (ServiceConfiguration) are the options' defaults.
    private static let defaults = ServiceConfiguration()

    public let command = Option(
        "command", value: "endpoint", help: "Where to accept commands (REQ/REP).",
        default: ServeOptions.defaults.commandEndpoint, environment: "COUNTRIES_COMMAND")
    public let events = Option(
        "events", value: "endpoint", help: "Where to publish events (PUB/SUB).",
        default: ServeOptions.defaults.eventsEndpoint, environment: "COUNTRIES_EVENTS")
    public let db = Option(
        "db", value: "path",
        help: "The SQLite store (owner-only; one service per store, held by PATH.lock).",
        default: ServiceConfiguration.defaultStorePath)
    public let etcd = Option(
        "etcd", value: "urls",
        help:
            "Replicated mode: keep the state in this etcd cluster (client URLs, comma-separated) instead of --db; every replica on the same cluster and prefix is one service (docs/HA.md).",
        environment: "COUNTRIES_ETCD"
    ).map { (urls, command) throws(UsageError) -> [String]? in
        guard let urls else { return nil }
        let endpoints = urls.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        for endpoint in endpoints
        where !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) || endpoint.count < 10 {
            throw command.usageError(
                "--etcd takes etcd client URLs like http://10.0.0.1:2379, comma-separated; \(endpoint.isEmpty ? "one is empty" : "\"\(endpoint)\" is not one")"
            )
        }
        return endpoints
    }
    public let etcdPrefix = Option(
        "etcd-prefix", value: "prefix",
        help: "With --etcd: the key prefix this service owns; replicas on one prefix share one list.",
        default: EtcdConfiguration.defaultPrefix
    ).map { (prefix, command) throws(UsageError) -> String in
        // At most 100 bytes: a replica checks every shorter prefix for a store it would nest in,
        // in one transaction (etcd takes at most 128 operations).
        guard !prefix.isEmpty, prefix.utf8.count <= 100,
            prefix.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw command.usageError(
                "--etcd-prefix must be 1 to 100 bytes of printable ASCII without spaces, like /countries/")
        }
        return prefix
    }
    public let replicaName = Option(
        "replica-name", value: "name",
        help:
            "With --etcd: this replica's name in status and logs (default: the host name and the command endpoint)."
    )
    public let inMemory = Option(
        flag: "in-memory", help: "Keep the state in memory only (lost when the service stops).")
    public let seed = Option(
        "seed", value: "list",
        help:
            "The list a new store starts from and `reset` puts back: default, world, or a FILE (JSON array or one name per line).",
        default: "default")
    public let heartbeat = Option(
        integer: "heartbeat-ms", value: "ms", help: "Heartbeat period.",
        default: ServeOptions.defaults.heartbeatInterval.wholeMilliseconds
    ).map { (milliseconds, command) throws(UsageError) -> Duration in
        guard (10...3_600_000).contains(milliseconds) else {
            throw command.usageError("--heartbeat-ms must be between 10 and 3600000")
        }
        return .milliseconds(milliseconds)
    }
    public let logLevel = CommonOptions.logLevel
    public let curveKey = Option(
        "curve-key", value: "file",
        help:
            "The service's secret key file: turns on CURVE encryption on both endpoints (needs --allow).")
    public let allow = Option(
        repeating: "allow", value: "dir",
        help: "A directory of client .pub keys that may read and change.")
    public let allowRead = Option(
        repeating: "allow-read", value: "dir",
        help: "A directory of client .pub keys that may only read and subscribe.")
    public let insecure = Option(
        flag: "insecure",
        help:
            "Allow plaintext tcp endpoints that are not loopback (anyone who reaches them can change the list)."
    )
    public let logFormat = Option(
        "log-format", value: "format",
        help: "text for people, json (one object per line) for collectors.",
        default: LogFormat.text.rawValue, allowedValues: LogFormat.allCases.map(\.rawValue)
    ).map { format, _ in LogFormat(rawValue: format) ?? .text }
    public let pidfile = Option(
        "pidfile", value: "path",
        help:
            "Write the process id here, held while serving (another serve with it exits 73); removed at a clean exit."
    )

    public init() {}
}

extension ParsedValues where Options == ServeOptions {
    /// The list `--seed` names: `default`, `world`, or a file of names (``SeedList/parse(_:)``).
    public func seedList() throws(SeedFileError) -> [Country] {
        let name = self[\.seed]
        switch name {
        case "default": return SeedList.standard
        case "world": return SeedList.world
        default:
            guard let contents = FileManager.default.contents(atPath: name) else {
                throw SeedFileError(
                    "cannot read the seed file \(name); give default, world, or a readable file")
            }
            do {
                return try SeedList.parse(contents)
            } catch {
                throw SeedFileError("seed file \(name): \(error.message)")
            }
        }
    }

    /// CURVE settings from `--curve-key`, `--allow` and `--allow-read`.
    public func serverSecurity() throws -> ServerSecurity? {
        let readWrite = self[\.allow]
        let readOnly = self[\.allowRead]
        guard let keyPath = self[\.curveKey] else {
            if !readWrite.isEmpty || !readOnly.isEmpty {
                throw usageError(
                    "--allow and --allow-read need --curve-key (the service's secret key)")
            }
            return nil
        }
        guard !readWrite.isEmpty || !readOnly.isEmpty else {
            throw usageError(
                "--curve-key needs --allow DIR (and/or --allow-read DIR): the client keys to admit")
        }
        return ServerSecurity(
            certificate: try KeyFiles.read(keyPath, wantSecret: true), readWriteDirectories: readWrite,
            readOnlyDirectories: readOnly)
    }
}
