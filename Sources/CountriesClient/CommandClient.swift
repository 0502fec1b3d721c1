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
/// endpoint that answered is tried first next time, except that, for a client that
/// ``followsWriter``, a change goes first to the elected writer's endpoint when `status` names
/// one of them (``WriterRoute``).
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
    /// Which endpoint writes, as `status` last said: a change to several endpoints goes there
    /// first, sparing it a replica's forwarding hop.
    public private(set) var route: WriterRoute
    /// Whether changes follow the ``route``. A one-shot command does not: it saves a hop of a
    /// quarter of a millisecond against a process start of tens, and where the writer refuses
    /// its key while another replica forwards for it, it would wait out a timeout every run.
    public let followsWriter: Bool
    /// A descriptor that, once readable, ends the wait for a reply at once (a signal pipe: the
    /// process is told to stop); nil: every try waits out its timeout.
    public var stopWhenReadable: Int32?

    /// Creates a client for one endpoint; nothing is connected until the first request.
    public convenience init(
        context: Context, endpoint: String, timeout: Duration = Defaults.requestTimeout,
        tries: Int = Defaults.requestTries,
        security: ClientSecurity? = nil
    ) {
        self.init(context: context, endpoints: [endpoint], timeout: timeout, tries: tries, security: security)
    }

    /// Creates a client for replicas of one service at `endpoints` (at least one); nothing is
    /// connected until the first request. With `followsWriter`, its changes go first to the
    /// endpoint `status` names as the elected writer.
    public init(
        context: Context, endpoints: [String], timeout: Duration = Defaults.requestTimeout,
        tries: Int = Defaults.requestTries,
        security: ClientSecurity? = nil, followsWriter: Bool = true
    ) {
        precondition(!endpoints.isEmpty, "a CommandClient needs an endpoint")
        self.endpoints = endpoints
        self.timeout = timeout
        self.tries = max(1, tries, endpoints.count)
        self.security = security
        self.followsWriter = followsWriter
        sockets = endpoints.map {
            LazyRequestSocket(context: context, endpoint: $0, security: security, watchesConnect: true)
        }
        route = WriterRoute(endpoints: endpoints)
    }

    /// The endpoint the next request goes to first: the one that answered last, or the one
    /// `status` named as the writer.
    public var preferred: String { endpoints[first] }

    /// The first endpoint, for a client of one.
    public var endpoint: String { endpoints[0] }

    /// Sends `request` and returns the service's reply (success or refusal), trying the
    /// endpoints as ``RetryMachine`` says.
    ///
    /// A change to several endpoints first asks `status` (a read: nothing changes whichever
    /// endpoint answers) when it needs a store to pin it to or the ``route`` has no fresh
    /// answer: the endpoint `status` names as the elected writer is tried first, and the store
    /// it names pins the change: without an `if_store` of its own it gets the store of the last
    /// reply, so that a retry landing on an endpoint of another store (endpoints that serve
    /// different prefixes or files) is refused there instead of applied twice, once per store.
    ///
    /// Throws ``ClientError`` when no reply came after every try (for a change:
    /// ``ClientError/Code/outcomeUnknown``, with the request id, since a try may have been
    /// applied), or the reply was not protocol JSON.
    public func send(_ request: Request) throws(ClientError) -> Reply {
        guard request.command.changes, endpoints.count > 1 else { return try exchange(request) }
        var request = request
        let now = ContinuousClock.now
        let needsStore = request.ifStore == nil && knownStore == nil
        if needsStore || (followsWriter && route.isDue(now: now, pinnedByHand: request.ifStore != nil)) {
            let status = try exchange(Request(command: .status))
            if followsWriter,
                let writer = route.learn(writerField: status.status?.writer, from: first, now: now)
            {
                first = writer
            }
        }
        // Without a store named (a refusal, or a service older than v1.1), unpinned, as before.
        if request.ifStore == nil { request.ifStore = knownStore }
        guard followsWriter else { return try exchange(request) }
        do {
            let reply = try exchange(request)
            route.changeEnded(answeredFrom: first, now: .now)
            return reply
        } catch {
            route.changeEnded(answeredFrom: nil, now: .now)
            throw error
        }
    }

    /// One request through the retry machine, its bytes the same on every try.
    private func exchange(_ request: Request) throws(ClientError) -> Reply {
        let body = request.encoded()
        var machine = RetryMachine(
            endpoints: endpoints.count, tries: tries, first: first, changes: request.command.changes,
            store: request.ifStore)
        var step = machine.start()
        var broken: ClientError?
        var undecodable: ClientError?
        while true {
            let index: Int
            switch step {
            case .send(let to):
                index = to
            case .finish(let verdict):
                return try finish(verdict, request: request, broken: broken, undecodable: undecodable)
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
                case .stopped:
                    step = machine.stopped()
                    continue
                case .failedAfterSending(let error):
                    // Sent, then the socket failed: a change may have been applied.
                    broken = error
                    undecodable = error
                    step = machine.failedAfterSending()
                    continue
                }
            } catch {
                // An endpoint ZeroMQ cannot use: the others may still answer.
                broken = error
                step = machine.couldNotSend()
                continue
            }
            switch ClientError.reply(in: frame, answering: request, from: endpoints[index]) {
            case .success(let reply):
                step = machine.received(reply)
            case .failure(let problem):
                // Not an answer to the change: its outcome is as unknown as after a timeout.
                undecodable = problem
                step = machine.receivedUndecodable()
            }
        }
    }

    /// The reply or error a finished request ends with.
    private func finish(
        _ verdict: RetryMachine.Verdict, request: Request, broken: ClientError?, undecodable: ClientError?
    ) throws(ClientError) -> Reply {
        guard case .replied(let reply, let from) = verdict else {
            throw ClientError.ending(
                verdict, of: request, endpoints: endpoints, tries: tries, unusable: broken,
                undecodable: undecodable)
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
        /// The request was sent, then ZeroMQ failed the wait or the receive: it may have arrived.
        case failedAfterSending(ClientError)
        /// ``stopWhenReadable`` became readable while the reply was awaited.
        case stopped
    }

    /// One try on endpoint `index`: send on a fresh or healthy socket, wait up to `timeout` for
    /// the reply, or less when the socket's ``ConnectionWatch`` sees the connect refused (only on
    /// an endpoint where that proves nothing listens: ``Endpoint/refusalIsConclusive(_:)``).
    private func attempt(_ body: Data, on index: Int) throws(ClientError) -> TryOutcome {
        let lazy = sockets[index]
        let endpoint = endpoints[index]
        let socket: Socket
        let watch: ConnectionWatch?
        do {
            (socket, watch) = try lazy.connected()
            guard try socket.send([body], dontWait: true) else {
                lazy.discard()
                return .timedOut
            }
        } catch {
            lazy.discard()
            throw ClientError(.sockets, endpoint: endpoint, "talking to \(endpoint) failed: \(error)")
        }
        do {
            var poller = Poller()
            let item = poller.add(socket)
            let watchItem = watch.map { poller.add($0.events) }
            let stopItem = stopWhenReadable.map { poller.add(fileDescriptor: $0) }
            let deadline = ContinuousClock.now + timeout
            while true {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { break }
                let ready = try poller.poll(timeoutMilliseconds: Int(remaining / .milliseconds(1)) + 1)
                if let stopItem, ready.isReadable(stopItem) {
                    lazy.discard()
                    return .stopped
                }
                if ready.isInterrupted { continue }
                if let watch, let watchItem, ready.isReadable(watchItem), try watch.update() == .refused {
                    // Never connected, so the request never left this socket: closing it
                    // (linger 0) drops it before libzmq's next connect, 100 ms later at least.
                    lazy.discard()
                    return .refused
                }
                guard ready.isReadable(item) else { continue }
                if let frames = try socket.receive(dontWait: true) {
                    lazy.answered()
                    return .answered(frames.last ?? Data())
                }
            }
            // REQ cannot send again before it receives: the Lazy Pirate way is a new socket.
            lazy.discard()
            return .timedOut
        } catch {
            lazy.discard()
            return .failedAfterSending(
                ClientError(.sockets, endpoint: endpoint, "waiting for \(endpoint)'s reply failed: \(error)"))
        }
    }
}

@available(*, unavailable) extension CommandClient: Sendable {}
