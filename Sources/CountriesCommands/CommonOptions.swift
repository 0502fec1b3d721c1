import ArgumentParsing
import CountriesCore
import CountriesWeb
import SystemSupport
import ZeroMQ

/// Declarations several subcommands share, written once.
enum CommonOptions {
    static var json: Option<Bool> {
        Option(
            flag: "json", help: "Print the service's JSON reply on one line.", environment: "COUNTRIES_JSON")
    }

    /// A subscriber's idea of the service's heartbeat period.
    static var heartbeat: Option<Duration> {
        Option(
            integer: "heartbeat-ms", value: "ms",
            help: "The service's heartbeat period; 3 missed make the view stale.",
            default: Defaults.heartbeatInterval.wholeMilliseconds, environment: "COUNTRIES_HEARTBEAT_MS"
        ).map { (milliseconds, command) throws(UsageError) in
            guard milliseconds >= 10 else { throw command.usageError("--heartbeat-ms must be at least 10") }
            return .milliseconds(milliseconds)
        }
    }

    private static let targetHelp =
        "A country: its 0-based index or its name (case-insensitive); digits are an index unless --by-name."

    /// `--by-name`: every TARGET is a name, also one made of digits (a country called `42`, which
    /// would otherwise be read as index 42). Declared by every command with a TARGET.
    static var byName: Option<Bool> {
        Option(
            flag: "by-name", help: "Read each TARGET as a name, also one made of digits.",
            environment: "COUNTRIES_BY_NAME")
    }

    /// One country, by index or name.
    static var target: Argument<CountryReference> {
        Argument("target", help: targetHelp).map { (text, command) throws(UsageError) in
            try reference(text, byName: command.flag("by-name"), command: command)
        }
    }

    /// One or more countries, by index or name.
    static var targets: Argument<[CountryReference]> {
        Argument(repeating: "target", help: targetHelp).map { (texts, command) throws(UsageError) in
            let byName = command.flag("by-name")
            var references: [CountryReference] = []
            for text in texts { references.append(try reference(text, byName: byName, command: command)) }
            return references
        }
    }

    /// `--count N`: a subscriber that prints stops after N of what it prints; nil to run on.
    static func count(help: String) -> Option<Int?> {
        Option(integer: "count", value: "n", help: help, environment: "COUNTRIES_COUNT").map {
            (count, command) throws(UsageError) in
            if let count, count < 1 { throw command.usageError("--count must be at least 1") }
            return count
        }
    }

    /// A non-negative seq, or nil when not given.
    static func seq(_ name: String, help: String) -> Option<UInt64?> {
        Option<Int?>(integer: name, value: "seq", help: help).map { (value, command) throws(UsageError) in
            guard let value else { return nil }
            guard value >= 0 else { throw command.usageError("--\(name) must be 0 or more") }
            return UInt64(value)
        }
    }

    static var ifSeq: Option<UInt64?> {
        seq("if-seq", help: "Only if the list is still at this seq (else: conflict).")
    }

    /// `--id`: the change's request id, so a script can send it again (after an unknown
    /// outcome, from another run) and have it applied at most once.
    static var requestID: Option<String?> {
        Option(
            "id", value: "id",
            help:
                "The request id (1 to 64 printable ASCII bytes; default: a fresh one). Sending a change again with the same id applies it at most once."
        ).map { (id, command) throws(UsageError) in
            guard let id else { return nil }
            if let problem = Request.problem(withID: id, named: "--id") { throw command.usageError(problem) }
            return id
        }
    }

    static var ifStore: Option<String?> {
        Option(
            "if-store", value: "id",
            help: "Only if the service runs on this store (its `store` id; else: conflict).")
    }

    /// `--log-format`, of `serve`, `relay` and `web`: how each log line is written.
    static var logFormat: Option<LogFormat> {
        Option(
            "log-format", value: "format",
            help: "text for people, json (one object per line) for collectors.",
            default: LogFormat.text.rawValue, environment: "COUNTRIES_LOG_FORMAT",
            allowedValues: LogFormat.allCases.map(\.rawValue)
        ).map { format, _ in LogFormat(rawValue: format) ?? .text }
    }

    /// The least severe level a service, relay or web process logs.
    static var logLevel: Option<LogLevel> {
        Option(
            "log-level", value: "level", help: "The least severe level logged.", default: LogLevel.info.name,
            environment: "COUNTRIES_LOG_LEVEL", allowedValues: LogLevel.allCases.map(\.name)
        ).map { (name, command) throws(UsageError) in
            guard let level = LogLevel(name: name) else {
                throw command.usageError("--log-level must be debug, info, warning or error")
            }
            return level
        }
    }

    /// Where a service or relay answers `/metrics`, `/healthz` and `/readyz` (off unless given).
    static var metrics: Option<WebListenAddress?> {
        Option(
            "metrics", value: "host:port",
            help:
                "Serve /metrics (Prometheus), /healthz and /readyz over HTTP here, like 127.0.0.1:9464; a non-loopback address needs --insecure (docs/OPERATIONS.md).",
            environment: "COUNTRIES_METRICS"
        ).map { (text, command) throws(UsageError) -> WebListenAddress? in
            guard let text else { return nil }
            guard let address = WebListenAddress(text) else {
                throw command.usageError(
                    "--metrics takes HOST:PORT with an IP address, like 127.0.0.1:9464 or [::1]:9464")
            }
            return address
        }
    }

    /// An endpoint option, its value (one endpoint, or several separated by commas) checked
    /// before anything connects or binds: `127.0.0.1:5555` without `tcp://` is a usage error
    /// that names the endpoint meant (``Endpoint/problem(_:)``). For a `list` (a client's
    /// replicas, `A,B`), an empty item is one too; otherwise empty items are left to the
    /// option's reader. Checked here, a value from the environment is named in the error.
    static func checkedEndpoints(_ option: Option<String>, list: Bool = false) -> Option<String> {
        let name = option.spec.name
        return option.map { (value, command) throws(UsageError) in
            let items = value.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            if list, items.contains(where: \.isEmpty) {
                throw command.usageError(
                    "--\(name) \"\(value)\" has an empty endpoint; give one endpoint, or several separated by commas (tcp://10.0.0.1:5555,tcp://10.0.0.2:5555)"
                )
            }
            for endpoint in items where !endpoint.isEmpty {
                let example = option.spec.defaultValue.flatMap { $0.hasPrefix("tcp://") ? $0 : nil }
                if let problem = Endpoint.problem(endpoint, example: example ?? "tcp://127.0.0.1:5555") {
                    throw command.usageError("--\(name): \(problem)")
                }
            }
            return value
        }
    }

    /// A target argument as a reference: digits are an index, anything else a name; with
    /// `byName`, always a name. Digits past any index are a usage error, not a name: they were
    /// looked up as one and said "no country named".
    static func reference(
        _ text: String, byName: Bool = false, command: ParsedCommand
    ) throws(UsageError) -> CountryReference {
        guard !byName else { return .name(text) }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .name(text) }
        guard let index = Int(text) else {
            throw command.usageError(
                "index \(text) is out of range (a list has at most \(Limits.maximumCountries) rows); pass --by-name for a country of that name"
            )
        }
        return .index(index)
    }
}
