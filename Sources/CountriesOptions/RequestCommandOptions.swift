import ArgumentParsing
import CountriesCore

// The options of the one-shot client subcommands; their names and help are in
// SubcommandDeclarations.swift, their requests and output in the executable.

/// The options of a query that takes nothing but `--json` and the connection (`list`, `count`,
/// `status`).
public struct JSONRequestOptions: RequestOptions {
    public let json = CommonOptions.json
    public let connection: ConnectionOptions

    public init(connection: ConnectionOptions) { self.connection = connection }
}

/// `countries get TARGET`.
public struct GetOptions: RequestOptions {
    public let target = CommonOptions.target
    public let json = CommonOptions.json
    public let connection: ConnectionOptions

    public init(connection: ConnectionOptions) { self.connection = connection }
}

/// `countries toggle TARGET...`.
public struct ToggleOptions: RequestOptions {
    public let targets = CommonOptions.targets
    public let json = CommonOptions.json
    public let ifSeq = CommonOptions.ifSeq
    public let ifStore = CommonOptions.ifStore
    public let id = CommonOptions.requestID
    public let connection: ConnectionOptions

    public init(connection: ConnectionOptions) { self.connection = connection }
}

/// `countries set TARGET --visited BOOL`.
public struct SetOptions: RequestOptions {
    public let target = CommonOptions.target
    public let visited = Option<Bool>(
        OptionSpec(
            name: "visited", valueName: "bool", help: "The new value.", allowedValues: ["true", "false"],
            isRequired: true)
    ) { (command) throws(UsageError) in
        // Required, so the parser has refused a command line without it.
        guard let visited = try command.bool("visited") else {
            throw command.usageError("Missing expected argument '--visited <bool>'")
        }
        return visited
    }
    public let ifSeq = CommonOptions.ifSeq
    public let ifStore = CommonOptions.ifStore
    public let id = CommonOptions.requestID
    public let json = CommonOptions.json
    public let connection: ConnectionOptions

    public init(connection: ConnectionOptions) { self.connection = connection }
}

/// `countries add NAME`.
public struct AddOptions: RequestOptions {
    public let name = Argument("name", help: "The country's name (1 to 100 characters).")
    public let visited = Option(flag: "visited", help: "Add it as visited.")
    public let ifStore = CommonOptions.ifStore
    public let id = CommonOptions.requestID
    public let json = CommonOptions.json
    public let connection: ConnectionOptions

    public init(connection: ConnectionOptions) { self.connection = connection }
}

/// `countries remove TARGET`.
public struct RemoveOptions: RequestOptions {
    public let target = CommonOptions.target
    public let ifStore = CommonOptions.ifStore
    public let id = CommonOptions.requestID
    public let json = CommonOptions.json
    public let connection: ConnectionOptions

    public init(connection: ConnectionOptions) { self.connection = connection }
}

/// `countries reset`.
public struct ResetOptions: RequestOptions {
    public let ifStore = CommonOptions.ifStore
    public let id = CommonOptions.requestID
    public let json = CommonOptions.json
    public let connection: ConnectionOptions

    public init(connection: ConnectionOptions) { self.connection = connection }
}

/// `countries history`.
public struct HistoryOptions: RequestOptions {
    public let since = Option(
        integer: "since", value: "seq", help: "Print the events after this seq.", default: 0
    ).map {
        (since, command) throws(UsageError) in
        guard since >= 0 else { throw command.usageError("--since must be 0 or more") }
        return UInt64(since)
    }
    public let json = CommonOptions.json
    public let connection: ConnectionOptions

    public init(connection: ConnectionOptions) { self.connection = connection }
}
