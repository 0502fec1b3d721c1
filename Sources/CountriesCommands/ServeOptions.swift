import ArgumentParsing
import CountriesCore
import CountriesWeb
import Etcd
import Foundation
import SystemSupport
import ZeroMQ

/// The options of `countries serve` (``ServeCommand``), with the checks that need several of them.
struct ServeOptions: OptionGroup {
    // The options' defaults are the service's: both read them from CountriesCore's Defaults.
    let command = CommonOptions.checkedEndpoints(
        Option(
            "command", value: "endpoint", help: "Where to accept commands (REQ/REP).",
            default: Defaults.commandEndpoint, environment: "COUNTRIES_COMMAND"))
    let events = CommonOptions.checkedEndpoints(
        Option(
            "events", value: "endpoint", help: "Where to publish events (PUB/SUB).",
            default: Defaults.eventsEndpoint, environment: "COUNTRIES_EVENTS"))
    let db = Option(
        "db", value: "path",
        help: "The SQLite store (owner-only; one service per store, held by PATH.lock).",
        default: Defaults.storePath, environment: "COUNTRIES_DB")
    let etcd = Option(
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
    let etcdPrefix = Option(
        "etcd-prefix", value: "prefix",
        help: "With --etcd: the key prefix this service owns; replicas on one prefix share one list.",
        default: Defaults.etcdPrefix, environment: "COUNTRIES_ETCD_PREFIX"
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
    let replicaName = Option(
        "replica-name", value: "name",
        help:
            "With --etcd: this replica's name in status and logs (default: the host name and the command endpoint).",
        environment: "COUNTRIES_REPLICA_NAME")
    let etcdCACert = Option(
        "etcd-cacert", value: "file",
        help: "With --etcd: the CA that signed the members' certificates (https:// endpoints).",
        environment: "COUNTRIES_ETCD_CACERT")
    let etcdCert = Option(
        "etcd-cert", value: "file",
        help: "With --etcd: the client certificate shown to etcd (needs --etcd-key).",
        environment: "COUNTRIES_ETCD_CERT")
    let etcdKey = Option(
        "etcd-key", value: "file",
        help: "With --etcd: the client certificate's private key (owner-only, like a secret key).",
        environment: "COUNTRIES_ETCD_KEY")
    let etcdUser = Option(
        "etcd-user", value: "name",
        help:
            "With --etcd: sign in to etcd as this user; the password comes from COUNTRIES_ETCD_PASSWORD or --etcd-password-file (docs/SECURITY.md).",
        environment: "COUNTRIES_ETCD_USER")
    let etcdPasswordFile = Option(
        "etcd-password-file", value: "file",
        help: "With --etcd-user: the file whose first line is the password (owner-only).",
        environment: "COUNTRIES_ETCD_PASSWORD_FILE")
    let inMemory = Option(
        flag: "in-memory", help: "Keep the state in memory only (lost when the service stops).",
        environment: "COUNTRIES_IN_MEMORY")
    let seed = Option(
        "seed", value: "list",
        help:
            "The list a new store starts from and `reset` puts back: default, world, or a FILE (a JSON array when it starts with [, else one name per line).",
        default: "default", environment: "COUNTRIES_SEED")
    let heartbeat = Option(
        integer: "heartbeat-ms", value: "ms", help: "Heartbeat period.",
        default: Defaults.heartbeatInterval.wholeMilliseconds,
        environment: "COUNTRIES_HEARTBEAT_MS"
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
            "The service's secret key file: turns on CURVE encryption on both endpoints (needs --allow).",
        environment: "COUNTRIES_CURVE_KEY")
    let allow = Option(
        repeating: "allow", value: "dir",
        help: "A directory of client .pub keys that may read and change.", environment: "COUNTRIES_ALLOW")
    let allowRead = Option(
        repeating: "allow-read", value: "dir",
        help: "A directory of client .pub keys that may only read and subscribe.",
        environment: "COUNTRIES_ALLOW_READ")
    let insecure = Option(
        flag: "insecure",
        help:
            "Allow plaintext tcp endpoints that are not loopback (anyone who reaches them can change the list).",
        environment: "COUNTRIES_INSECURE")
    let logFormat = CommonOptions.logFormat
    let metrics = CommonOptions.metrics
    let pidfile = Option(
        "pidfile", value: "path",
        help:
            "Write the process id here, held while serving (another serve with it exits 73); removed at a clean exit. Never written over a file that is not a stale pid file.",
        environment: "COUNTRIES_PIDFILE")

    init() {}
}

extension ParsedValues where Options == ServeOptions {
    /// Whether the state is kept in memory only: `--in-memory` with a `--db` given at the same
    /// level (both on the command line, or both from the environment) is a usage error, since
    /// one of them would be ignored; a command-line one wins over one from the environment.
    func inMemory() throws(UsageError) -> Bool {
        let memory = parsed.source("in-memory")
        let db = parsed.source("db")
        guard self[\.inMemory], db != .none else { return self[\.inMemory] }
        switch (memory, db) {
        case (.commandLine, .environment): return true
        case (.environment, .commandLine): return false
        default:
            let named = { (source: ParsedCommand.ValueSource, option: String) in
                if case .environment(let variable) = source { return "\(variable) (--\(option))" }
                return "--\(option)"
            }
            throw usageError(
                "\(named(memory, "in-memory")) and \(named(db, "db")) are two different stores; give one")
        }
    }

    /// The list `--seed` names: `default`, `world`, or a file of names (``SeedList/parse(_:)``).
    func seedList() throws(SeedFileError) -> [Country] {
        let name = self[\.seed]
        switch name {
        case "default": return SeedList.standard
        case "world": return SeedList.world
        default:
            guard let contents = FileManager.default.contents(atPath: name) else {
                throw SeedFileError(
                    "cannot read the seed file \(name); give default, world, or a readable file",
                    unreadable: true)
            }
            do {
                return try SeedList.parse(contents)
            } catch {
                throw SeedFileError("seed file \(name): \(error.message)")
            }
        }
    }

    /// `--pidfile`, refused when it names the store's own file or one beside it (`-wal`, `-shm`,
    /// `.lock`): with no store yet, the pid file would stand where the store is to be created.
    /// (``PidFile`` refuses an existing store whatever its path: it is not a pid file.)
    func pidFilePath() throws(UsageError) -> String? {
        guard let pidFile = self[\.pidfile] else { return nil }
        guard try !inMemory(), self[\.etcd] == nil else { return pidFile }
        let db = self[\.db]
        let absolute = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.path }
        let storeFiles = [db, db + "-wal", db + "-shm", db + ".lock"].map(absolute)
        guard !storeFiles.contains(absolute(pidFile)) else {
            throw usageError(
                "--pidfile \(pidFile) is one of the store's files (--db \(db)); give the pid file a path of its own, like countries.pid"
            )
        }
        return pidFile
    }

    /// TLS files and the etcd user from `--etcd-cacert`, `--etcd-cert`, `--etcd-key`,
    /// `--etcd-user` and the password (`--etcd-password-file`, else `environmentPassword`, the
    /// value of `COUNTRIES_ETCD_PASSWORD`). Secret files must be private, as key files are.
    func etcdSecurity(environmentPassword: String?) throws -> EtcdSecurity {
        let caFile = self[\.etcdCACert]
        let certificate = self[\.etcdCert]
        let key = self[\.etcdKey]
        let userName = self[\.etcdUser]
        let passwordFile = self[\.etcdPasswordFile]
        if self[\.etcd] == nil {
            let given = [
                ("--etcd-cacert", caFile), ("--etcd-cert", certificate), ("--etcd-key", key),
                ("--etcd-user", userName), ("--etcd-password-file", passwordFile),
            ].filter { $0.1 != nil }.map(\.0)
            if let first = given.first {
                throw usageError("\(first) is for replicated mode; give --etcd URLS too")
            }
            return EtcdSecurity()
        }
        if passwordFile != nil && userName == nil {
            throw usageError("--etcd-password-file goes with --etcd-user NAME")
        }
        if (certificate == nil) != (key == nil) {
            throw usageError("--etcd-cert and --etcd-key go together: the certificate and its private key")
        }
        for file in [caFile, certificate, key, passwordFile].compactMap({ $0 })
        where !FileManager.default.isReadableFile(atPath: file) {
            throw KeyFileError(.unusable, "cannot read \(file); give a readable file")
        }
        for file in [key, passwordFile].compactMap({ $0 }) {
            do {
                try PrivateFiles.checkSecretKey(file)
            } catch {
                throw KeyFileError(.unusable, "\(error)")
            }
        }
        var user: EtcdUser?
        if let userName {
            guard !userName.isEmpty, userName.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw usageError("--etcd-user must be a user name of printable ASCII without spaces")
            }
            let password: String
            if let passwordFile {
                guard let contents = FileManager.default.contents(atPath: passwordFile),
                    let text = String(data: contents, encoding: .utf8),
                    let line = text.split(separator: "\n", omittingEmptySubsequences: false).first,
                    !line.isEmpty
                else {
                    throw KeyFileError(.unusable, "\(passwordFile) holds no password on its first line")
                }
                password = String(line.hasSuffix("\r") ? line.dropLast() : line)
            } else if let environmentPassword, !environmentPassword.isEmpty {
                password = environmentPassword
            } else {
                throw usageError(
                    "--etcd-user needs its password: set COUNTRIES_ETCD_PASSWORD or give --etcd-password-file FILE"
                )
            }
            user = EtcdUser(name: userName, password: password)
        }
        return EtcdSecurity(
            certificateAuthorityFile: caFile, certificateFile: certificate, keyFile: key, user: user)
    }

    /// CURVE settings from `--curve-key`, `--allow` and `--allow-read`.
    func serverSecurity() throws -> ServerSecurity? {
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
