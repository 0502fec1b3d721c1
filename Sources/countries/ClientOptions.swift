import ArgumentParsing
import CountriesClient
import CountriesOptions
import CountriesService
import ZeroMQ

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
        security = try Self.security(
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

    /// The client's CURVE settings from `--curve-key` and `--server-key` (both or neither).
    private static func security(curveKey: String?, serverKey: String?, command: ParsedCommand) throws
        -> ClientSecurity?
    {
        switch (curveKey, serverKey) {
        case (nil, nil):
            return nil
        case (.some, nil):
            throw command.usageError("--curve-key needs --server-key (the service's .pub file)")
        case (nil, .some):
            throw command.usageError("--server-key needs --curve-key (this client's .key file)")
        case (.some(let curveKey), .some(let serverKey)):
            let own = try KeyFiles.read(curveKey, wantSecret: true)
            let server = try KeyFiles.read(serverKey, wantSecret: false)
            return ClientSecurity(
                publicKey: own.publicKey, secretKey: own.secretKey ?? "", serverKey: server.publicKey)
        }
    }
}
