import ArgumentParsing
import CountriesClient
import CountriesCore
import Foundation
import ZeroMQ

/// Runs the subcommand the user asked for and returns its exit code.
struct Dispatcher {
    let command: ParsedCommand
    let environment: [String: String]

    func run() throws -> Int32 {
        switch command.path.last ?? "" {
        case "serve": return try ServeCommand(command: command).run()
        case "events": return try EventsCommand(command: command).run()
        case "watch": return try WatchCommand(command: command).run()
        case "select": return try SelectCommand(command: command).run()
        case "on-change": return try OnChangeCommand(command: command).run()
        case "keygen": return try KeygenCommand(command: command).run()
        case "relay": return try RelayCommand(command: command).run()
        default: return try ClientCommand(command: command, options: try clientOptions()).run()
        }
    }

    private func clientOptions() throws -> ClientOptions {
        try ClientOptions(command)
    }
}

/// The options every client subcommand shares, validated.
struct ClientOptions {
    var commandEndpoint: String
    var eventsEndpoint: String?
    var timeout: Duration
    var tries: Int
    var security: ClientSecurity?
    /// The keys for the event endpoint, when it is a relay with a key of its own.
    var eventsSecurity: ClientSecurity?

    init(_ command: ParsedCommand) throws {
        security = try KeyFiles.clientSecurity(
            curveKey: command.value("curve-key"), serverKey: command.value("server-key"), command: command)
        // Every client command takes the whole connection group; only subscribers use the event
        // endpoint and its key, the others ignore them (CountriesCommandLine.connectionOptions).
        let followsEvents = CountriesCommandLine.subscriberNames.contains(command.path.last ?? "")
        if followsEvents, let path = command.value("events-server-key") {
            guard let security else {
                throw command.usageError("--events-server-key needs --curve-key and --server-key")
            }
            var events = security
            events.serverKey = try KeyFiles.read(path, wantSecret: false).publicKey
            eventsSecurity = events
        }
        commandEndpoint = command.value("command") ?? "tcp://127.0.0.1:5555"
        eventsEndpoint = followsEvents ? command.value("events") : nil
        guard let milliseconds = try command.int("timeout"), milliseconds > 0 else {
            throw command.usageError("--timeout must be a positive number of milliseconds")
        }
        guard let tries = try command.int("retries"), tries >= 1 else {
            throw command.usageError("--retries must be at least 1")
        }
        timeout = .milliseconds(milliseconds)
        self.tries = tries
    }

    func makeClient(context: Context) -> CommandClient {
        CommandClient(
            context: context, endpoint: commandEndpoint, timeout: timeout, tries: tries, security: security)
    }
}

extension ParsedCommand {
    /// A target argument as a reference: digits are an index, anything else a name.
    func reference(_ text: String) -> CountryReference {
        if let index = Int(text), text.allSatisfy(\.isNumber) || text.hasPrefix("-") {
            return .index(index)
        }
        return .name(text)
    }

    /// An optional non-negative seq option.
    func seq(_ option: String) throws -> UInt64? {
        guard let value = try int(option) else { return nil }
        guard value >= 0 else { throw usageError("--\(option) must be 0 or more") }
        return UInt64(value)
    }
}
