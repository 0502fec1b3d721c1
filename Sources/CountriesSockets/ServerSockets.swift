import CountriesCore
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

/// The server side that the service and the relay share: one context, CURVE with its ZAP
/// handler and allow-lists (reloaded on SIGHUP), protected mode, binding with advice (a live
/// ipc socket refused, the file owner-only from the start), the socket monitors that log
/// handshake failures and count connections, and the heartbeat options. See docs/SECURITY.md.
///
/// Every socket is made here and closed by ``close()``, which also ends the context: a start
/// that fails half-way gives everything back at once (``deinit`` closes too).
///
/// Confined to one thread, like its sockets: the one that runs the poll loop.
public final class ServerSockets {
    /// The context of every socket the owner uses.
    public let context: Context
    /// Connections on the sockets made with `countsConnections` (the subscribers).
    public private(set) var connections = 0

    private let security: ServerSecurity?
    private let zap: ZAPHandler?
    private let logger: Logger
    /// The owner's sockets, closed by ``close()`` before the monitors and the ZAP handler.
    private var sockets: [Socket] = []
    private var monitors: [Monitor] = []
    private var zapItem: Int?
    private var monitorItems: [(item: Int, monitor: Monitor)] = []
    private var closed = false
    /// The event socket (an XPUB in manual mode) and what each of its subscribers holds.
    private var events: (socket: Socket, ledger: SubscriberLedger, endpoint: String?)?
    /// Subscribers dropped, logged a few at a time.
    private var drops = RefusalLog(noun: "subscribers dropped")
    /// The ipc socket files bound, as they were then: ``close()`` removes each that is still
    /// that file. libzmq leaves them behind; one that another process bound at the same path
    /// since is not ours to remove.
    private var socketFiles: [(path: String, identity: FileIdentity)] = []

    /// A socket monitor, and what its events are for.
    private struct Monitor {
        let socket: Socket
        /// Whether its connections count in ``connections``.
        let counts: Bool
        /// Whether it watches the event socket, whose ledger forgets a connection that went.
        let watchesEvents: Bool
    }

    /// Whether clients are authenticated: then each message carries a User-Id (``Access``).
    public var authenticates: Bool { zap != nil }

    /// Heartbeats on every connection: dead peers are noticed without traffic of our own.
    static let heartbeatIntervalMilliseconds: Int32 = 5_000
    static let heartbeatTimeoutMilliseconds: Int32 = 15_000
    /// Monitor events queued unread before libzmq's I/O thread waits for the loop: 126 bytes
    /// each as measured (two 64-byte message slots, the endpoint inside them), so about 6.3 MB
    /// at most, past what strangers can make in the longest pass (docs/SECURITY.md, "Limits").
    static let monitorBacklog: Int32 = 50_000

    /// The descriptors this process may hold (the soft limit, raised to the hard one at start).
    public let descriptorLimit: Int
    /// Below this many descriptors, a server says at start that its clients may run out of them.
    static let fewDescriptors = 4_096

    /// Reads the allow-lists and starts the ZAP handler (with `security`), which must exist
    /// before any CURVE socket binds, or libzmq would admit any key.
    public init(security: ServerSecurity?, logger: Logger) throws(ServiceError) {
        self.security = security
        self.logger = logger
        // Each subscriber and client holds a descriptor: with the limit spent, libzmq 4.3
        // aborts on an ipc accept (and silently stops accepting over tcp).
        descriptorLimit = DescriptorLimit.raiseToHardLimit()
        if descriptorLimit < Self.fewDescriptors {
            logger.log(
                .warning,
                "this process may open only \(descriptorLimit) files, and each client and subscriber takes one: raise the hard limit (ulimit -Hn, or LimitNOFILE= in a systemd unit)"
            )
        }
        let allowList = try security.map { security throws(ServiceError) in
            try AllowList.load(
                readWrite: security.readWriteDirectories, readOnly: security.readOnlyDirectories)
        }
        let context: Context
        do {
            context = try Context()
        } catch {
            throw ServiceError(.sockets, "could not set up ZeroMQ: \(error)")
        }
        do {
            zap = try allowList.map { try ZAPHandler(context: context, allowList: $0, logger: logger) }
        } catch {
            context.terminate()
            throw ServiceError(.sockets, "could not start the ZAP handler: \(error)")
        }
        self.context = context
    }

    deinit { close() }

    /// Protected mode: a plaintext tcp endpoint must be loopback, unless CURVE is on or the
    /// operator said `--insecure`. `risk` says what a stranger could do ("read every change").
    public static func checkExposure(
        _ endpoints: [String], security: ServerSecurity?, allowsInsecure: Bool, risk: String
    ) throws(ServiceError) {
        guard security == nil, !allowsInsecure else { return }
        for endpoint in endpoints where !Endpoint.isLoopbackOrLocal(endpoint) {
            throw ServiceError(
                .unsafeEndpoint,
                "refusing to bind \(endpoint) without encryption: anyone who can reach it could \(risk). Use --curve-key KEY --allow DIR to require keys, bind 127.0.0.1, or pass --insecure to accept the risk"
            )
        }
    }

    /// A socket that clients connect to: a CURVE server behind the ZAP handler when security is
    /// on, with heartbeats, and a monitor that logs failed handshakes (and, with
    /// `countsConnections`, keeps ``connections``). `role` names it in monitor endpoints.
    public func makeServerSocket(_ type: SocketType, role: String, countsConnections: Bool = false)
        throws(ZMQError)
        -> Socket
    {
        try makeServerSocket(type, role: role, countsConnections: countsConnections, watchesEvents: false)
    }

    /// The event socket clients subscribe to: an XPUB in manual mode, so that each
    /// subscription is seen and honoured only when it is a prefix of a topic, and each
    /// subscriber connection is held to `bounds` (``SubscriberLedger``) and dropped past them.
    /// `wholeStream`: an honoured subscription stands for every topic (the relay's).
    public func makeEventSocket(
        role: String, countsConnections: Bool = false, bounds: SubscriberBounds, wholeStream: Bool = false
    ) throws(ZMQError) -> Socket {
        let socket = try makeServerSocket(
            .xpub, role: role, countsConnections: countsConnections, watchesEvents: true)
        try socket.setOption(.xpubManual, true)
        try socket.setOption(.maxMessageSize, bounds.messageBytes)
        // With CURVE, the ZAP handler's user id goes first into each connection's queue as a
        // message libzmq (4.3) counts as written and never as read: it takes one place for good,
        // and a queue of one would never take the subscription.
        try socket.setOption(.receiveHighWaterMark, bounds.queuedMessages + (authenticates ? 1 : 0))
        events = (socket, SubscriberLedger(bounds: bounds, wholeStream: wholeStream), nil)
        return socket
    }

    private func makeServerSocket(
        _ type: SocketType, role: String, countsConnections: Bool, watchesEvents: Bool
    )
        throws(ZMQError) -> Socket
    {
        let socket = try makeSocket(type)
        if let security, let secretKey = security.certificate.secretKey {
            try socket.setOption(.curveServer, true)
            try socket.setOption(.curveSecretKey, secretKey)
            try socket.setOption(.zapDomain, ZAPHandler.domain)
            try socket.setOption(.zapEnforceDomain, true)
        }
        var kinds: MonitorEvent.Kinds = countsConnections || watchesEvents ? [.accepted, .disconnected] : []
        // Handshake failures never reach the ZAP handler when the client is plaintext or has
        // the wrong server key; the monitor is how they get logged.
        if zap != nil { kinds.formUnion(.handshakeFailures) }
        if !kinds.isEmpty {
            let endpoint = "inproc://countries.monitor.\(role)"
            let monitor = try context.makeSocket(.pair)
            monitors.append(Monitor(socket: monitor, counts: countsConnections, watchesEvents: watchesEvents))
            // libzmq's I/O thread sends each event with a blocking send: with the default queue
            // (2,000 events) strangers connecting while a loop pass waits on etcd would hold that
            // thread, and every connection of the context, until the loop came back. An inproc
            // queue's mark is the sum of both ends' (libzmq's side keeps its 1,000).
            try monitor.setOption(.receiveHighWaterMark, Self.monitorBacklog)
            try socket.startMonitor(endpoint, kinds: kinds)
            try monitor.connect(endpoint)
        }
        return socket
    }

    /// A socket of `type` with the heartbeat options, closed by ``close()``.
    public func makeSocket(_ type: SocketType) throws(ZMQError) -> Socket {
        let socket = try context.makeSocket(type)
        sockets.append(socket)
        try socket.setOption(.heartbeatInterval, Self.heartbeatIntervalMilliseconds)
        try socket.setOption(.heartbeatTimeout, Self.heartbeatTimeoutMilliseconds)
        return socket
    }

    /// Binds `socket` and returns the endpoint bound (an ephemeral tcp port resolved); throws a
    /// ``ServiceError`` that says what to do. An ipc socket file is owner-only from the start.
    public func bind(_ socket: Socket, to endpoint: String, role: String) throws(ServiceError) -> String {
        // libzmq unlinks an ipc socket file before it binds, so a second process would silently
        // take the endpoint from a live one; refuse as a busy tcp port is refused.
        if Self.isLiveUnixSocket(endpoint) {
            throw ServiceError(
                .bind,
                "cannot bind the \(role) endpoint \(endpoint): Address already in use; another process (perhaps another countries serve or relay) is using it; stop it or pick another path"
            )
        }
        do {
            do {
                // Created owner-only from the start, not just after the chmod below.
                let previous = umask(0o077)
                defer { umask(previous) }
                try socket.bind(endpoint)
            }
            let bound = try socket.lastEndpoint
            if let path = Self.socketFile(of: bound) {
                chmod(path, 0o600)
                if let identity = FileIdentity(path: path) { socketFiles.append((path, identity)) }
            }
            if events?.socket === socket { events?.endpoint = bound }
            return bound
        } catch {
            let advice: String
            switch error.code {
            case EADDRINUSE:
                advice =
                    "another process (perhaps another countries serve or relay) is using it; stop it or pick another port"
            case EPROTONOSUPPORT, EINVAL:
                advice = "use tcp://HOST:PORT or ipc:///path"
            default:
                advice = "check the address"
            }
            throw ServiceError(
                .bind, "cannot bind the \(role) endpoint \(endpoint): \(error.message); \(advice)")
        }
    }

    /// The file of an ipc endpoint, made owner-only once bound so that other local users cannot
    /// connect; nil for another transport or an abstract socket, which has no file.
    private static func socketFile(of endpoint: String) -> String? {
        guard endpoint.hasPrefix("ipc://") else { return nil }
        let path = String(endpoint.dropFirst("ipc://".count))
        return path.isEmpty || path.hasPrefix("@") ? nil : path
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
        defer { Glibc.close(descriptor) }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    // MARK: - In the poll loop

    /// Adds the ZAP handler and the monitors to the owner's poller; ``handle(_:)`` serves them.
    public func register(in poller: inout Poller) {
        zapItem = zap.map { poller.add($0.socket) }
        monitorItems = monitors.map { (poller.add($0.socket), $0) }
    }

    /// Answers ZAP requests and reads monitor events that `ready` reports.
    public func handle(_ ready: PollResult) {
        if let zap, let zapItem, ready.isReadable(zapItem) {
            zap.handlePending()
        }
        for (item, monitor) in monitorItems where ready.isReadable(item) {
            readMonitor(monitor)
        }
    }

    /// Reads the subscriptions queued on the event socket
    /// (``makeEventSocket(role:countsConnections:bounds:wholeStream:)``) and applies what the
    /// ledger says: honours prefixes of the protocol's topics, drops a connection past its bounds.
    /// A bounded number per pass, so subscribers cannot starve the rest of the loop.
    public func applySubscriptions() {
        guard let socket = events?.socket else { return }
        // Disconnections first: a descriptor in a message below may be a new connection's.
        for (_, monitor) in monitorItems where monitor.watchesEvents { readMonitor(monitor) }
        for _ in 0..<1_000 {
            guard let message = try? socket.receiveMessage(dontWait: true, properties: ["Peer-Address"])
            else {
                return
            }
            let peer = message.sourceDescriptor.map {
                SubscriberLedger.Peer(descriptor: $0, address: message.properties["Peer-Address"] ?? "")
            }
            // libzmq splits a multipart message into frames, each taken as a message of its own.
            let action =
                events?.ledger.record(
                    message.frames.first ?? Data(), from: peer, isAnotherConnection: PeerDisconnection.isLive)
                ?? .none
            do {
                switch action {
                case .subscribe(let prefix): try socket.setOption(.subscribe, prefix)
                case .unsubscribe(let prefix): try socket.setOption(.unsubscribe, prefix)
                case .none: continue
                case .drop(let reason):
                    guard let peer, let endpoint = events?.endpoint else { continue }
                    let done = PeerDisconnection.disconnect(peer, acceptedOn: endpoint)
                    let line =
                        "dropped a subscriber (\(peer.address)): it \(reason)\(done ? "" : "; it had already gone")"
                    if let line = drops.record(line, now: .now) { logger.log(.warning, line) }
                }
            } catch {
                logger.log(.warning, "applying a subscription failed: \(error)")
            }
        }
    }

    private func readMonitor(_ monitor: Monitor) {
        while let frames = try? monitor.socket.receive(dontWait: true) {
            guard let event = MonitorEvent(frames: frames) else { continue }
            switch event.kind {
            case .accepted:
                if monitor.counts { connections += 1 }
            case .disconnected:
                if monitor.counts { connections = max(0, connections - 1) }
                // The value of a disconnection is the descriptor the connection had.
                if monitor.watchesEvents { events?.ledger.forget(descriptor: Int32(bitPattern: event.value)) }
            case .handshakeFailedAuth:
                break  // Refused by our own ZAP handler, which logged it with the key.
            default:
                zap?.note(
                    refusal:
                        "a client on \(event.endpoint) failed the CURVE handshake (plaintext, or a wrong server key)"
                )
            }
        }
    }

    /// SIGHUP: read the allow-lists again; keep the old ones, and say so, if the new ones
    /// cannot be read.
    public func reloadAllowLists() {
        guard let zap, let security else {
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

    /// Closes every socket (each with its own linger), ends the context and removes the ipc
    /// socket files it bound. Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        // The watched sockets before their monitors' readers (closing one stops its monitor
        // first), the ZAP handler last.
        for socket in sockets + monitors.map(\.socket) { socket.close() }
        zap?.socket.close()
        sockets = []
        monitors = []
        monitorItems = []
        context.terminate()
        for file in socketFiles where FileIdentity(path: file.path) == file.identity { unlink(file.path) }
        socketFiles = []
    }
}

@available(*, unavailable) extension ServerSockets: Sendable {}
