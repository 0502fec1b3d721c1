import ArgumentParsing
import CountriesClient
import Foundation
import SystemSupport
import ZeroMQ

/// The options every client subcommand shares (``ConnectionOptions``), validated, with the key
/// files read.
struct ClientOptions: Sendable {
    /// `--command`: one endpoint, or the replicas of one service in the order to try them.
    var commandEndpoints: [String]
    /// `--events`: one endpoint, or the replicas of one service (all subscribed to).
    var eventsEndpoints: [String]
    /// `--timeout`, for each reply.
    var timeout: Duration
    /// `--retries`: how many times a request is sent in all.
    var tries: Int
    /// The keys from `--curve-key` and `--server-key`; nil for plaintext.
    var security: ClientSecurity?
    /// The keys for the event endpoint, when it is a relay with a key of its own.
    var eventsSecurity: ClientSecurity?

    /// Reads the connection options; a usage error for a bad combination, a ``KeyFileError``
    /// for a key file that cannot be used.
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
        commandEndpoints = Self.endpoints(connection[\.command])
        // Only subscribers read --events; the others accept any value and ignore it.
        eventsEndpoints =
            followsEvents
            ? Self.endpoints(connection[\.events])
            : [connection[\.events]]
        timeout = connection[\.timeout]
        tries = connection[\.retries]
    }

    /// A client for the command endpoints with these settings, for one command's run: its
    /// changes do not follow the elected writer (``CommandClient/followsWriter``), so the
    /// endpoint that answers first takes them, and a replica that is not the writer forwards.
    func makeClient(context: Context) -> CommandClient {
        CommandClient(
            context: context, endpoints: commandEndpoints, timeout: timeout, tries: tries, security: security,
            followsWriter: false)
    }

    /// The endpoints of `--command` or `--events`: one, or several separated by commas
    /// (replicas of one service). The option has refused an empty one
    /// (``CommonOptions/checkedEndpoints(_:list:)``).
    static func endpoints(_ value: String) -> [String] {
        value.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
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
