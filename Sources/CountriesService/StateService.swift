import CountriesCore
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// The state service: owns the list, answers commands on a ROUTER socket (plain REQ clients
/// work), and publishes every committed change and a heartbeat on an XPUB socket (a PUB that
/// honours only the protocol's topics as subscriptions).
///
/// One thread runs ``run(stopOn:)`` and owns both sockets; one `zmq_poll` waits on the command
/// socket and the signal pipe together, with the next heartbeat as its timeout.
public final class StateService {
    /// The configuration the service runs with.
    public let configuration: ServiceConfiguration
    /// The endpoints actually bound (ephemeral tcp ports resolved), command first.
    public private(set) var boundEndpoints: [String] = []

    private let context: Context
    private let commands: Socket
    private let events: Socket
    private let zap: ZAPHandler?
    /// Handshake failures on the command socket (with CURVE), for the log.
    private let commandsMonitor: Socket?
    /// Connections on the event socket: the subscriber count in `status`, and handshake failures.
    private let eventsMonitor: Socket
    private var subscriberCount = 0
    private let handler: CommandHandler
    private let logger: Logger
    private let startedAt = ContinuousClock.now
    /// One writer per store: held from before the binds until ``run(stopOn:)`` ends.
    private let writerLock: WriterLock?

    /// Opens the store and binds both sockets; throws a ``ServiceError`` that says what to fix.
    public init(configuration: ServiceConfiguration, logger: Logger) throws(ServiceError) {
        self.configuration = configuration
        self.logger = logger
        try StateService.checkExposure(configuration)
        let allowList = try configuration.security.map { security throws(ServiceError) in
            try AllowList.load(
                readWrite: security.readWriteDirectories, readOnly: security.readOnlyDirectories)
        }
        // Before the binds: a second service on the same store is refused before it takes a
        // port, and names the one that holds it.
        let writerLock = try WriterLock.acquire(storePath: configuration.storePath)
        self.writerLock = writerLock
        do {
            let context = try Context()
            self.context = context
            // The ZAP handler must be bound before a CURVE socket binds, or libzmq would admit
            // any key (with ZAP_ENFORCE_DOMAIN it would refuse every one instead).
            zap = try allowList.map { try ZAPHandler(context: context, allowList: $0, logger: logger) }
            commands = try context.makeSocket(.router)
            // An XPUB in manual mode, so only the protocol's topics are ever subscribed: libzmq
            // keeps a trie node per byte of each prefix a peer asks for (a 1 MB prefix cost
            // about 27 MB), and nothing is published under any other prefix anyway.
            events = try context.makeSocket(.xpub)
            try events.setOption(.xpubManual, true)
            if let security = configuration.security, let secretKey = security.certificate.secretKey {
                for socket in [commands, events] {
                    try socket.setOption(.curveServer, true)
                    try socket.setOption(.curveSecretKey, secretKey)
                    try socket.setOption(.zapDomain, ZAPHandler.domain)
                    try socket.setOption(.zapEnforceDomain, true)
                }
                // Handshake failures never reach the ZAP handler when the client is plaintext or
                // has the wrong server key; the monitor is how they get logged.
                let monitor = try context.makeSocket(.pair)
                try commands.startMonitor("inproc://countries.monitor.commands", kinds: .handshakeFailures)
                try monitor.connect("inproc://countries.monitor.commands")
                commandsMonitor = monitor
            } else {
                commandsMonitor = nil
            }
            // PUB does not say who subscribes, but its connections are the subscribers.
            eventsMonitor = try context.makeSocket(.pair)
            try events.startMonitor(
                "inproc://countries.monitor.events", kinds: [.accepted, .disconnected, .handshakeFailures])
            try eventsMonitor.connect("inproc://countries.monitor.events")
            for socket in [commands, events] {
                try socket.setOption(.linger, Int32(configuration.lingerOnShutdown / .milliseconds(1)))
            }
            try commands.setOption(.maxMessageSize, configuration.maximumMessageBytes)
            try events.setOption(.maxMessageSize, configuration.maximumSubscriptionMessageBytes)
            try commands.setOption(.receiveHighWaterMark, 10_000)
            // Per peer: one that never reads its replies loses them past this, nobody else does.
            try commands.setOption(.sendHighWaterMark, configuration.replyHighWaterMark)
            // Dead peers are noticed without traffic of our own.
            try commands.setOption(.heartbeatInterval, 5_000)
            try commands.setOption(.heartbeatTimeout, 15_000)
            try events.setOption(.sendHighWaterMark, configuration.subscriberHighWaterMark)
            try events.setOption(.heartbeatInterval, 5_000)
            try events.setOption(.heartbeatTimeout, 15_000)
        } catch {
            writerLock?.release()
            throw ServiceError(.sockets, "could not set up ZeroMQ: \(error)")
        }
        do {
            try StateService.bind(commands, configuration.commandEndpoint, role: "command")
            try StateService.bind(events, configuration.eventsEndpoint, role: "events")
            boundEndpoints = [try commands.lastEndpoint, try events.lastEndpoint]
            for endpoint in boundEndpoints { StateService.restrictPermissions(of: endpoint) }
            writerLock?.announce(endpoints: boundEndpoints)
        } catch let error as ServiceError {
            commands.close()
            events.close()
            writerLock?.release()
            throw error
        } catch {
            writerLock?.release()
            throw ServiceError(.sockets, "\(error)")
        }
        let start = startedAt
        let endpoints = boundEndpoints
        let version = configuration.version
        do {
            // Opened after the binds succeed, so a busy port does not leave a new store behind.
            let store: any StateStore
            if let path = configuration.storePath {
                // ":memory:" is SQLite's own in-memory database: the same code as on disk.
                let file = try StateService.openPrivateStore(path, seed: configuration.seed, logger: logger)
                if let note = file.identityNote {
                    logger.log(.info, "store \(path): \(note) (\(file.identity))")
                }
                store = file
            } else {
                store = MemoryStore(seed: configuration.seed)
            }
            handler = try CommandHandler(store: store, seed: configuration.seed, logger: logger) {
                CommandHandler.StatusInfo(
                    version: version,
                    uptimeSeconds: Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000,
                    endpoints: endpoints)
            }
        } catch {
            commands.close()
            events.close()
            writerLock?.release()
            throw ServiceError(.store, error.description)
        }
    }

    /// Opens the store with owner-only files: a new one is created 0600 (SQLite gives its
    /// `-wal` and `-shm` the database's mode), an existing looser one is tightened and logged.
    private static func openPrivateStore(_ path: String, seed: [Country], logger: Logger) throws(StoreError)
        -> Store
    {
        guard path != ":memory:" else { return try Store(path: path, seed: seed) }
        let created = PrivateFiles.createIfMissing(path)
        let store: Store
        do {
            store = try Store(path: path, seed: seed)
        } catch {
            // Leave nothing behind for a store that never opened.
            if created, PrivateFiles.size(of: path) == 0 { unlink(path) }
            throw error
        }
        for file in [path, path + "-wal", path + "-shm"] {
            if let old = PrivateFiles.tighten(file) {
                logger.log(
                    .warning,
                    "\(file) was mode \(PrivateFiles.octal(old)), open to group or others; made it owner-only (\(PrivateFiles.octal(old & ~PrivateFiles.sharedBits)))"
                )
            }
        }
        return store
    }

    /// Protected mode: a plaintext tcp endpoint must be loopback, unless CURVE is on or the
    /// operator said `--insecure`.
    static func checkExposure(_ configuration: ServiceConfiguration) throws(ServiceError) {
        guard configuration.security == nil, !configuration.allowsInsecureEndpoints else { return }
        for endpoint in [configuration.commandEndpoint, configuration.eventsEndpoint]
        where !Endpoint.isLoopbackOrLocal(endpoint) {
            throw ServiceError(
                .unsafeEndpoint,
                "refusing to bind \(endpoint) without encryption: anyone who can reach it could read and change the list. Use --curve-key KEY --allow DIR to require keys, bind 127.0.0.1, or pass --insecure to accept the risk"
            )
        }
    }

    /// ipc endpoints are files: make them owner-only, so other local users cannot connect.
    static func restrictPermissions(of endpoint: String) {
        guard endpoint.hasPrefix("ipc://") else { return }
        let path = String(endpoint.dropFirst("ipc://".count))
        guard !path.hasPrefix("@") else { return }  // an abstract socket has no file
        chmod(path, 0o600)
    }

    /// True when `endpoint` is `ipc://PATH` and a process accepts connections on PATH. A stale
    /// socket file left by a crash refuses the connection: it is not live and is reused.
    static func isLiveUnixSocket(_ endpoint: String) -> Bool {
        let prefix = "ipc://"
        guard endpoint.hasPrefix(prefix) else { return false }
        let path = Array(endpoint.dropFirst(prefix.count).utf8)
        // `ipc://@name` is Linux's abstract namespace: there bind itself reports EADDRINUSE.
        guard !path.isEmpty, path.first != UInt8(ascii: "@") else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    private static func bind(_ socket: Socket, _ endpoint: String, role: String) throws(ServiceError) {
        // libzmq unlinks an ipc socket file before it binds, so a second service would silently
        // take the endpoint from a live one; refuse as a busy tcp port is refused.
        if isLiveUnixSocket(endpoint) {
            throw ServiceError(
                .bind,
                "cannot bind the \(role) endpoint \(endpoint): Address already in use; another process (perhaps another countries serve) is using it; stop it or pick another path"
            )
        }
        do {
            // Created owner-only from the start, not just after the chmod that follows.
            let previous = umask(0o077)
            defer { umask(previous) }
            try socket.bind(endpoint)
        } catch {
            let advice: String
            switch error.code {
            case EADDRINUSE:
                advice =
                    "another process (perhaps another countries serve) is using it; stop it or pick another port"
            case EPROTONOSUPPORT, EINVAL:
                advice = "use tcp://HOST:PORT or ipc:///path"
            default:
                advice = "check the address"
            }
            throw ServiceError(
                .bind, "cannot bind the \(role) endpoint \(endpoint): \(error.message); \(advice)")
        }
    }

    /// The current state (for tests and the start-up log line).
    public var state: CountriesState { handler.state }

    /// Serves until `stop` becomes readable (a signal arrived; forever when nil), then closes the
    /// sockets with a bounded linger. The batch in hand is always finished first.
    public func run(stopOn stop: (any StopSource)?) throws(ServiceError) {
        defer { writerLock?.release() }
        logger.log(
            .info,
            "serving commands on \(boundEndpoints[0]), events on \(boundEndpoints[1]); store \(handler.storeDescription); seq \(handler.state.seq), \(handler.state.count) countries"
        )
        var poller = Poller()
        let commandItem = poller.add(commands)
        let stopItem = stop.map { poller.add(fileDescriptor: $0.fileDescriptor) }
        let zapItem = zap.map { poller.add($0.socket) }
        let commandsMonitorItem = commandsMonitor.map { poller.add($0) }
        let eventsMonitorItem = poller.add(eventsMonitor)
        let eventsItem = poller.add(events)
        let interval = configuration.heartbeatInterval
        var nextHeartbeat = ContinuousClock.now
        var batch: [IncomingRequest] = []
        batch.reserveCapacity(configuration.maximumBatch)

        serving: while true {
            let now = ContinuousClock.now
            if now >= nextHeartbeat {
                publishHeartbeat()
                nextHeartbeat = now + interval
            }
            let timeout = max(0, Int((nextHeartbeat - now) / .milliseconds(1)) + 1)
            let ready: PollResult
            do {
                ready = try poller.poll(timeoutMilliseconds: timeout)
            } catch {
                throw ServiceError(.sockets, "polling failed: \(error)")
            }
            if ready.isInterrupted { continue }
            if let zap, let zapItem, ready.isReadable(zapItem) {
                zap.handlePending()
            }
            if let commandsMonitor, let commandsMonitorItem, ready.isReadable(commandsMonitorItem) {
                readMonitor(commandsMonitor)
            }
            if ready.isReadable(eventsMonitorItem) {
                readMonitor(eventsMonitor)
            }
            if ready.isReadable(eventsItem) {
                readSubscriptions()
            }
            if ready.isReadable(commandItem) {
                readBatch(into: &batch)
                if !batch.isEmpty {
                    send(handler.handle(batch))
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if let stopItem, ready.isReadable(stopItem), let stop {
                for reason in stop.drain() {
                    if reason == SIGHUP {
                        reloadAllowLists()
                        continue
                    }
                    logger.log(.info, "\(stop.describe(reason)): stopping at seq \(handler.state.seq)")
                    break serving
                }
            }
        }
        shutdown()
    }

    /// Reads every request already queued, up to the batch limit, without waiting.
    private func readBatch(into batch: inout [IncomingRequest]) {
        let properties = zap == nil ? [] : ["User-Id"]
        var costly = 0
        while batch.count < configuration.maximumBatch && costly < configuration.maximumHistoryPerBatch {
            let message: ReceivedMessage?
            do {
                message = try commands.receiveMessage(dontWait: true, properties: properties)
            } catch {
                logger.log(.error, "receiving a request failed: \(error)")
                return
            }
            guard let message else { return }
            var request = StateService.split(message.frames)
            if StateService.mayBeHistory(request.body) { costly += 1 }
            if zap != nil {
                // The ZAP handler wrote "rw:KEY" or "ro:KEY"; anything else gets the least.
                request.access =
                    message.properties["User-Id"]?.hasPrefix("rw:") == true ? .readWrite : .readOnly
            }
            batch.append(request)
        }
    }

    /// Honours the subscriptions that are prefixes of the protocol's topics and drops the rest
    /// (``SubscriptionFilter``); a bounded number per pass, so subscribers cannot starve commands.
    private func readSubscriptions() {
        for _ in 0..<1_000 {
            guard let frames = try? events.receive(dontWait: true) else { return }
            guard frames.count == 1, let message = frames.first else { continue }
            do {
                switch SubscriptionFilter.decide(message) {
                case .subscribe(let prefix): try events.setOption(.subscribe, prefix)
                case .unsubscribe(let prefix): try events.setOption(.unsubscribe, prefix)
                case .ignore: continue
                }
            } catch {
                logger.log(.warning, "applying a subscription failed: \(error)")
            }
        }
    }

    /// Whether a body may be a `history` request, without decoding it: the op's name is in it.
    /// A false positive (a country called "history") only ends a batch early.
    static func mayBeHistory(_ body: [Data]) -> Bool {
        let needle = Array("history".utf8)
        return body.contains { frame in
            frame.count >= needle.count && frame.firstRange(of: needle) != nil
        }
    }

    /// SIGHUP: read the allow-lists again; keep the old ones if the new ones cannot be read.
    private func reloadAllowLists() {
        guard let zap, let security = configuration.security else {
            logger.log(.info, "SIGHUP received: nothing to reload (no --allow lists)")
            return
        }
        do {
            let list = try AllowList.load(
                readWrite: security.readWriteDirectories, readOnly: security.readOnlyDirectories)
            zap.allowList = list
            for skipped in list.skipped { logger.log(.warning, "allow-list: skipped \(skipped)") }
            logger.log(
                .info,
                "SIGHUP received: allow-lists reloaded (\(list.readWriteCount) read-write, \(list.readOnlyCount) read-only keys)"
            )
        } catch {
            logger.log(.error, "SIGHUP received: \(error.message); keeping the previous allow-lists")
        }
    }

    private func readMonitor(_ monitor: Socket) {
        while let frames = try? monitor.receive(dontWait: true) {
            guard let event = MonitorEvent(frames: frames) else { continue }
            switch event.kind {
            case .accepted:
                subscriberCount += 1
            case .disconnected:
                subscriberCount = max(0, subscriberCount - 1)
            case .handshakeFailedAuth:
                break  // Refused by our own ZAP handler, which logged it with the key.
            default:
                zap?.note(
                    refusal:
                        "a client on \(event.endpoint) failed the CURVE handshake (plaintext, or a wrong server key)"
                )
            }
            handler.subscribers = subscriberCount
        }
    }

    /// Splits a ROUTER message into its envelope (routing id(s) and the empty delimiter a REQ
    /// peer adds) and its body. A DEALER peer sends no delimiter: then the first frame alone is
    /// the envelope.
    static func split(_ frames: [Data]) -> IncomingRequest {
        if let delimiter = frames.firstIndex(where: \.isEmpty), delimiter > 0 {
            return IncomingRequest(
                envelope: Array(frames[...delimiter]), body: Array(frames[(delimiter + 1)...]))
        }
        return IncomingRequest(envelope: Array(frames.prefix(1)), body: Array(frames.dropFirst()))
    }

    private func send(_ outgoing: [Outgoing]) {
        for item in outgoing {
            switch item {
            case .reply(let envelope, let body):
                do {
                    // ROUTER drops a reply to a peer that has gone; it never blocks.
                    try commands.send(envelope + [body], dontWait: true)
                } catch {
                    logger.log(.warning, "sending a reply failed: \(error)")
                }
            case .publish(let event):
                publish(topic: event.topic.rawValue, body: event.encoded())
            }
        }
    }

    private func publishHeartbeat() {
        publish(
            topic: Topic.heartbeat.rawValue,
            body: Heartbeat(seq: handler.state.seq, store: handler.storeIdentity).encoded())
    }

    private func publish(topic: String, body: Data) {
        do {
            // PUB never blocks: a subscriber over its high-water mark misses the message and
            // notices the gap in seq.
            try events.send([Data(topic.utf8), body], dontWait: true)
        } catch {
            logger.log(.warning, "publishing \(topic) failed: \(error)")
        }
    }

    private func shutdown() {
        commands.close()
        events.close()
        commandsMonitor?.close()
        eventsMonitor.close()
        zap?.socket.close()
        context.terminate()
        logger.log(.info, "stopped at seq \(handler.state.seq)")
    }
}

@available(*, unavailable) extension StateService: Sendable {}

/// Something that tells the service loop to stop by becoming readable: the signal pipe in the
/// executable, a plain pipe in tests.
public protocol StopSource: AnyObject {
    /// Readable when the service should stop.
    var fileDescriptor: Int32 { get }
    /// Consumes what made it readable; the values name the reasons (signal numbers).
    func drain() -> [Int32]
}

extension StopSource {
    /// A reason for the log line.
    func describe(_ reason: Int32) -> String {
        switch reason {
        case SIGINT: return "SIGINT received"
        case SIGTERM: return "SIGTERM received"
        default: return "stop requested (\(reason))"
        }
    }
}

extension SignalPipe: StopSource {}

/// Why the service cannot start or go on.
public struct ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The part that failed.
    public enum Code: String, Sendable {
        /// The store cannot be opened or read.
        case store
        /// An endpoint cannot be bound.
        case bind
        /// ZeroMQ failed otherwise.
        case sockets
        /// The CURVE settings cannot be used (a key file, an allow-list directory).
        case security
        /// A plaintext endpoint would be exposed beyond this host (protected mode).
        case unsafeEndpoint
        /// Another service holds the store (one writer per store).
        case storeInUse
    }

    /// The part that failed.
    public var code: Code
    /// What went wrong and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
