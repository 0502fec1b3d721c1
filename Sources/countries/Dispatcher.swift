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
        try CountriesCommandLine.registry.make(command).run()
    }
}

/// The options every client subcommand shares, validated.
struct ClientOptions {
    var commandEndpoint: String
    var eventsEndpoint: String
    var timeout: Duration
    var tries: Int
    var security: ClientSecurity?
    /// The keys for the event endpoint, when it is a relay with a key of its own.
    var eventsSecurity: ClientSecurity?

    init<Options: ConnectedOptions>(_ command: ParsedValues<Options>) throws {
        let connection = command[\.connection]
        security = try KeyFiles.clientSecurity(
            curveKey: connection[\.curveKey], serverKey: connection[\.serverKey], command: command.parsed)
        // Every client command takes the whole connection group; only subscribers use the event
        // endpoint and its key, the others ignore them (ConnectionOptions).
        let followsEvents = connection.declared.followsEvents
        if followsEvents, let path = connection[\.eventsServerKey] {
            guard let security else {
                throw command.usageError("--events-server-key needs --curve-key and --server-key")
            }
            var events = security
            events.serverKey = try KeyFiles.read(path, wantSecret: false).publicKey
            eventsSecurity = events
        }
        commandEndpoint = connection[\.command]
        eventsEndpoint = connection[\.events]
        timeout = connection[\.timeout]
        tries = connection[\.retries]
    }

    func makeClient(context: Context) -> CommandClient {
        CommandClient(
            context: context, endpoint: commandEndpoint, timeout: timeout, tries: tries, security: security)
    }
}
