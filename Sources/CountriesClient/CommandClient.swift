import CountriesCore
import Foundation
import ZeroMQ

/// Sends commands to the service over REQ and waits for the reply, retrying with the Lazy
/// Pirate pattern: on a timeout the REQ socket is closed (linger 0), a new one is opened, and
/// the same request (same id) is sent again, up to ``tries`` times in all.
///
/// Because a retried request carries the id of the first, the service answers it with the
/// first reply and changes nothing twice: retries are safe even for toggles.
///
/// With several endpoints (replicas of one service, `--command A,B`), each try goes to the next
/// endpoint in turn, with the same id, so a retry that lands on another replica still applies
/// at most once (docs/PROTOCOL.md, "Replicas"). A reply of ``CountriesError/Code/unavailable``
/// (the change may or may not have been applied) is retried the same way, and so, with several
/// endpoints, is `storage_error` (nothing changed; another replica may have a quorum). The
/// endpoint that answered is tried first next time.
public final class CommandClient {
    /// The service's command endpoints, in the order given.
    public let endpoints: [String]
    /// How long to wait for each reply.
    public let timeout: Duration
    /// How many times a request is sent before giving up (at least 1, and at least once to each
    /// endpoint).
    public let tries: Int
    /// The CURVE keys to connect with, if the service asks for them.
    public let security: ClientSecurity?

    /// One Lazy Pirate socket per endpoint; only the one in use is open.
    private let sockets: [LazyRequestSocket]
    /// The endpoint tried first: the last one that answered.
    private var first = 0
    /// The store the last reply named: the one a change to several endpoints is pinned to.
    public private(set) var knownStore: String?

    /// Creates a client for one endpoint; nothing is connected until the first request.
    public convenience init(
        context: Context, endpoint: String, timeout: Duration = Defaults.requestTimeout,
        tries: Int = Defaults.requestTries,
        security: ClientSecurity? = nil
    ) {
        self.init(context: context, endpoints: [endpoint], timeout: timeout, tries: tries, security: security)
    }

    /// Creates a client for replicas of one service at `endpoints` (at least one); nothing is
    /// connected until the first request.
    public init(
        context: Context, endpoints: [String], timeout: Duration = Defaults.requestTimeout,
        tries: Int = Defaults.requestTries,
        security: ClientSecurity? = nil
    ) {
        precondition(!endpoints.isEmpty, "a CommandClient needs an endpoint")
        self.endpoints = endpoints
        self.timeout = timeout
        self.tries = max(1, tries, endpoints.count)
        self.security = security
        sockets = endpoints.map { LazyRequestSocket(context: context, endpoint: $0, security: security) }
    }

    /// The endpoint the next request goes to first (the one that answered last).
    public var preferred: String { endpoints[first] }

    /// The first endpoint, for a client of one.
    public var endpoint: String { endpoints[0] }

    /// Sends `request` and returns the service's reply (success or refusal), trying the
    /// endpoints as ``RetryMachine`` says.
    ///
    /// A change to several endpoints is pinned to one store: without an `if_store` of its own it
    /// gets the store of the last reply, or of a `count` asked first, so that a retry landing
    /// on an endpoint of another store (endpoints that serve different prefixes or files) is
    /// refused there instead of applied twice, once per store.
    ///
    /// Throws ``ClientError`` when no reply came after every try (for a change:
    /// ``ClientError/Code/outcomeUnknown``, with the request id, since a try may have been
    /// applied), or the reply was not protocol JSON.
    public func send(_ request: Request) throws(ClientError) -> Reply {
        var request = request
        if request.command.changes, request.ifStore == nil, endpoints.count > 1 {
            request.ifStore = try storeToPin()
        }
        return try exchange(request)
    }

    /// The store a change to several endpoints is meant for: the last one a reply named, or
    /// the one a `count` names (a read: nothing changes whichever endpoint answers).
    private func storeToPin() throws(ClientError) -> String? {
        if let knownStore { return knownStore }
        let reply = try exchange(Request(command: .query(.count)))
        // A refusal, or a service older than v1.1: the change goes unpinned, as before.
        return reply.store
    }

    /// One request through the retry machine, its bytes the same on every try.
    private func exchange(_ request: Request) throws(ClientError) -> Reply {
        let body = request.encoded()
        var machine = RetryMachine(
            endpoints: endpoints.count, tries: tries, first: first, changes: request.command.changes,
            store: request.ifStore)
        var step = machine.start()
        var broken: ClientError?
        while true {
            let index: Int
            switch step {
            case .send(let to):
                index = to
            case .finish(let verdict):
                return try finish(verdict, request: request, broken: broken)
            }
            let frame: Data
            do {
                switch try self.attempt(body, on: index) {
                case .answered(let answer): frame = answer
                case .timedOut:
                    step = machine.timedOut()
                    continue
                case .refused:
                    step = machine.refused()
                    continue
                }
            } catch {
                // An endpoint ZeroMQ cannot use: the others may still answer.
                broken = error
                step = machine.couldNotSend()
                continue
            }
            do {
                step = machine.received(try Reply.decode(frame))
            } catch {
                let endpoint = endpoints[index]
                throw ClientError(
                    .badReply, endpoint: endpoint, "the reply from \(endpoint) is not protocol JSON")
            }
        }
    }

    /// The reply or error a finished request ends with.
    private func finish(_ verdict: RetryMachine.Verdict, request: Request, broken: ClientError?)
        throws(ClientError) -> Reply
    {
        guard case .replied(let reply, let from) = verdict else {
            throw ClientError.ending(
                verdict, of: request, endpoints: endpoints, tries: tries, unusable: broken)
        }
        first = from
        if reply.ok, let store = reply.store { knownStore = store }
        return reply
    }

    /// Sends a command with a fresh request id, so retries of it are applied at most once.
    public func send(_ command: Command) throws(ClientError) -> Reply {
        try send(Request(id: RequestID.make(), command: command))
    }

    /// How one try ended.
    private enum TryOutcome {
        /// The reply's last frame.
        case answered(Data)
        /// No reply within the timeout.
        case timedOut
        /// Nothing listens at the endpoint: the connect failed before reaching anyone.
        case refused
    }

    /// One try on endpoint `index`: send on a fresh or healthy socket, wait up to `timeout` for
    /// the reply, or less when the socket's ``ConnectionWatch`` sees the connect refused (only on
    /// an endpoint where that proves nothing listens: ``Endpoint/refusalIsConclusive(_:)``).
    private func attempt(_ body: Data, on index: Int) throws(ClientError) -> TryOutcome {
        let lazy = sockets[index]
        let endpoint = endpoints[index]
        do {
            let (socket, watch) = try lazy.connected()
            guard try socket.send([body], dontWait: true) else {
                lazy.discard()
                return .timedOut
            }
            var poller = Poller()
            let item = poller.add(socket)
            let watchItem = watch.map { poller.add($0.events) }
            let deadline = ContinuousClock.now + timeout
            while true {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { break }
                let ready = try poller.poll(timeoutMilliseconds: Int(remaining / .milliseconds(1)) + 1)
                if ready.isInterrupted { continue }
                if let watch, let watchItem, ready.isReadable(watchItem), try watch.update() == .refused {
                    // Never connected, so the request never left this socket: closing it
                    // (linger 0) drops it before libzmq's next connect, 100 ms later at least.
                    lazy.discard()
                    return .refused
                }
                guard ready.isReadable(item) else { continue }
                if let frames = try socket.receive(dontWait: true) {
                    return .answered(frames.last ?? Data())
                }
            }
            // REQ cannot send again before it receives: the Lazy Pirate way is a new socket.
            lazy.discard()
            return .timedOut
        } catch {
            lazy.discard()
            throw ClientError(.sockets, endpoint: endpoint, "talking to \(endpoint) failed: \(error)")
        }
    }
}

@available(*, unavailable) extension CommandClient: Sendable {}

/// The REQ socket of a Lazy Pirate client: made and connected on first use, thrown away after a
/// timeout (REQ cannot send again before it receives), closed with its owner.
final class LazyRequestSocket {
    private let context: Context
    private let endpoint: String
    private let security: ClientSecurity?
    /// The socket and the watch on its connect, if one is open.
    private(set) var current: (socket: Socket, watch: ConnectionWatch?)?

    init(context: Context, endpoint: String, security: ClientSecurity?) {
        self.context = context
        self.endpoint = endpoint
        self.security = security
    }

    deinit {
        discard()
    }

    /// The open socket, or a new one: linger 0 (a dropped socket must not hold up shutdown with
    /// an unanswered request), replies up to 64 MiB (a 10,000-row list), CURVE if given; with a
    /// watch on its connect where a refusal proves nothing listens (ipc, loopback tcp), so that
    /// one is seen at once. Elsewhere a failed connect may be a network down for a moment, which
    /// the tries and their timeout are there to wait out.
    func connected() throws(ZMQError) -> (socket: Socket, watch: ConnectionWatch?) {
        if let current { return current }
        let socket = try context.makeSocket(.req)
        try socket.setOption(.linger, 0)
        try socket.setOption(.maxMessageSize, 64 << 20)
        if let security { try security.apply(to: socket) }
        let watch =
            Endpoint.refusalIsConclusive(endpoint) ? try ConnectionWatch(socket, context: context) : nil
        try socket.connect(endpoint)
        current = (socket, watch)
        return (socket, watch)
    }

    /// Closes the socket; the next ``connected()`` makes a fresh one.
    func discard() {
        current?.socket.close()
        current?.watch?.close()
        current = nil
    }
}

@available(*, unavailable) extension LazyRequestSocket: Sendable {}

/// Fresh request ids: random, so two clients never share one.
public enum RequestID {
    /// A new id (a UUID, 36 characters).
    public static func make() -> String { UUID().uuidString.lowercased() }
}

/// The CURVE keys a client connects with: its own key pair and the server's public key (Z85).
public struct ClientSecurity: Sendable, Equatable {
    /// The client's public key.
    public var publicKey: String
    /// The client's secret key.
    public var secretKey: String
    /// The service's public key.
    public var serverKey: String

    /// Creates client keys.
    public init(publicKey: String, secretKey: String, serverKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.serverKey = serverKey
    }

    /// Turns CURVE on for `socket` as a client.
    public func apply(to socket: Socket) throws(ZMQError) {
        try socket.setOption(.curveServerKey, serverKey)
        try socket.setOption(.curvePublicKey, publicKey)
        try socket.setOption(.curveSecretKey, secretKey)
    }
}

/// A command could not be carried out by the client (as opposed to refused by the service).
public struct ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Code: String, Sendable {
        /// No reply came after every try.
        case noReply = "no_reply"
        /// A reply came but is not protocol JSON.
        case badReply = "bad_reply"
        /// ZeroMQ itself failed (a malformed endpoint, for one).
        case sockets
        /// Nothing listens at the endpoints (the connection was refused, or there is no socket
        /// file), so nothing was sent.
        case refused = "connection_refused"
        /// A change got no reply, or `unavailable`, and no later try brought its own reply: it
        /// may or may not have been applied. Sending it again with the same id is safe.
        case outcomeUnknown = "outcome_unknown"
    }

    /// What failed.
    public var code: Code
    /// The endpoint the client talked to.
    public var endpoint: String
    /// What went wrong, for a person.
    public var message: String
    /// Whether no endpoint answered at all (no service there, or CURVE refused this client).
    public var heardNothing: Bool

    /// Creates an error.
    public init(_ code: Code, endpoint: String, _ message: String, heardNothing: Bool? = nil) {
        self.code = code
        self.endpoint = endpoint
        self.message = message
        self.heardNothing = heardNothing ?? (code == .noReply)
    }

    /// The message.
    public var description: String { message }

    /// The error a request ends with when the retry machine's verdict is not a reply;
    /// `unusable` is what ZeroMQ said of the endpoints, when none could be used. Callers take a
    /// reply out first; one passed here anyway becomes `bad_reply`.
    static func ending(
        _ verdict: RetryMachine.Verdict, of request: Request, endpoints: [String], tries: Int,
        unusable: ClientError?
    ) -> ClientError {
        switch verdict {
        case .replied:
            return ClientError(
                .badReply, endpoint: endpoints.joined(separator: ","), "a reply is not an error")
        case .outcomeUnknown(let last):
            return .outcomeUnknown(id: request.id, endpoints: endpoints, tries: tries, lastReply: last)
        case .noReply:
            return .noReply(endpoints: endpoints, tries: tries)
        case .refused(let indices):
            return .refused(endpoints: indices.map { endpoints[$0] })
        case .unusable:
            return unusable
                ?? ClientError(
                    .sockets, endpoint: endpoints.joined(separator: ","), "no endpoint could be used")
        }
    }

    /// No reply from any of `endpoints` after `tries` tries (a read: nothing was changed).
    static func noReply(endpoints: [String], tries: Int) -> ClientError {
        ClientError(
            .noReply, endpoint: endpoints.joined(separator: ","),
            "no reply from \(endpoints.joined(separator: ", ")) after \(tries) \(tries == 1 ? "try" : "tries")\(endpoints.count > 1 ? " in all" : "")"
        )
    }

    /// Nothing listens at any of `endpoints` (the connection was refused, or there is no socket
    /// file): no service is running there, and nothing was sent.
    static func refused(endpoints: [String]) -> ClientError {
        let list = endpoints.joined(separator: ", ")
        return ClientError(
            .refused, endpoint: endpoints.joined(separator: ","),
            "nothing is listening on \(list): is `countries serve` running? (see --command)",
            heardNothing: false)
    }

    /// A change whose outcome no try settled: what happened, and how to find out or retry
    /// safely (with the same id).
    static func outcomeUnknown(id: String?, endpoints: [String], tries: Int, lastReply: Reply?) -> ClientError
    {
        let what =
            lastReply?.failure.map { "the last try was answered \($0.code.rawValue): \($0.message)" }
            ?? noReply(endpoints: endpoints, tries: tries).message
        let retry =
            id.map {
                "request id \($0); check with `countries get`, or send it again with --id \($0) (applied at most once)"
            }
            ?? "check with `countries get` before sending it again"
        return ClientError(
            .outcomeUnknown, endpoint: endpoints.joined(separator: ","),
            "outcome unknown: the change may or may not have been applied (\(what)); \(retry)",
            heardNothing: lastReply == nil)
    }
}
