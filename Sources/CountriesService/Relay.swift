import CountriesCore
import Foundation
@preconcurrency import Glibc
import Synchronization
import ZeroMQ

/// What `countries relay` is told.
public struct RelayConfiguration: Sendable {
    /// The event endpoint to subscribe to: a service's, or another relay's.
    public var upstream: String
    /// Where the relay's own subscribers connect.
    public var downstream: String
    /// The relay's certificate and allow-lists: CURVE toward its subscribers (and its key
    /// toward the upstream when ``upstreamServerKey`` is set).
    public var security: ServerSecurity?
    /// The upstream's public key, to connect to it with CURVE (using the relay's own key).
    public var upstreamServerKey: String?
    /// Whether a plaintext downstream tcp endpoint that is not loopback is allowed.
    public var allowsInsecureEndpoints = false
    /// Messages held per subscriber (and from the upstream) before dropping, as in the service.
    public var highWaterMark: Int32 = 10_000
    /// Largest frame a subscriber may send (subscriptions only), as on the service's event socket.
    public var maximumSubscriptionMessageBytes: Int64 = 512

    /// Creates a configuration.
    public init(upstream: String, downstream: String) {
        self.upstream = upstream
        self.downstream = downstream
    }
}

/// A forwarder for fan-out across hosts: an XSUB connected upstream, subscribed to everything,
/// and an XPUB bound for subscribers, in manual mode so that only the protocol's topics are
/// honoured as subscriptions (``SubscriptionFilter``, the service's rule). Events and
/// heartbeats travel down unchanged, so `watch`, `select` and `on-change` work through it as
/// they do against the service (they still send commands to the service itself).
///
/// Not `zmq_proxy`: it passes every subscription up and lets libzmq store each, a trie node
/// per byte of its prefix, so one subscriber could take the relay's memory (and the service's).
///
/// The forwarding loop runs on its own thread, which owns the two sockets; the calling thread
/// serves the ZAP handler (when CURVE is on) and waits for the stop signal, then shuts the
/// context down, which ends the loop.
public enum Relay {
    /// Runs the relay until `stop` says so.
    public static func run(
        _ configuration: RelayConfiguration, logger: Logger, stopOn stop: any StopSource
    ) throws(ServiceError) {
        if configuration.security == nil, !configuration.allowsInsecureEndpoints,
            !Endpoint.isLoopbackOrLocal(configuration.downstream)
        {
            throw ServiceError(
                .unsafeEndpoint,
                "refusing to bind \(configuration.downstream) without encryption: anyone who can reach it could read every change. Use --curve-key KEY --allow DIR, bind 127.0.0.1, or pass --insecure"
            )
        }
        let allowList = try configuration.security.map { security throws(ServiceError) in
            try AllowList.load(
                readWrite: security.readWriteDirectories, readOnly: security.readOnlyDirectories)
        }
        let context: Context
        let zap: ZAPHandler?
        do {
            context = try Context()
            zap = try allowList.map { try ZAPHandler(context: context, allowList: $0, logger: logger) }
        } catch {
            throw ServiceError(.sockets, "could not set up ZeroMQ: \(error)")
        }

        let outcome = Mutex<ProxyState>(.starting)
        let thread = Thread {
            proxyThread(configuration, context: context, outcome: outcome)
        }
        thread.name = "relay-forward"
        thread.start()

        // Wait for the binds, so a busy port is an error at start, not a silent relay.
        let startDeadline = ContinuousClock.now + .seconds(10)
        while outcome.withLock({ $0 == .starting }) && ContinuousClock.now < startDeadline {
            usleep(2_000)
        }
        if case .failed(let message) = outcome.withLock({ $0 }) {
            zap?.socket.close()
            context.terminate()
            throw ServiceError(.bind, message)
        }
        logger.log(
            .info,
            "relaying \(configuration.upstream) to \(configuration.downstream)\(configuration.security == nil ? "" : " (CURVE)")"
        )

        var poller = Poller()
        let stopItem = poller.add(fileDescriptor: stop.fileDescriptor)
        let zapItem = zap.map { poller.add($0.socket) }
        serving: while true {
            guard let ready = try? poller.poll(timeoutMilliseconds: 1_000) else { break }
            if let zap, let zapItem, ready.isReadable(zapItem) { zap.handlePending() }
            if ready.isReadable(stopItem) {
                for reason in stop.drain() {
                    if reason == SIGHUP, let zap, let security = configuration.security {
                        if let list = try? AllowList.load(
                            readWrite: security.readWriteDirectories, readOnly: security.readOnlyDirectories)
                        {
                            zap.allowList = list
                            logger.log(
                                .info, "SIGHUP received: allow-lists reloaded (\(list.keys.count) keys)")
                        }
                        continue
                    }
                    logger.log(.info, "\(stop.describe(reason)): stopping the relay")
                    break serving
                }
            }
            if case .failed(let message) = outcome.withLock({ $0 }) {
                logger.log(.error, "the relay stopped: \(message)")
                break
            }
        }
        context.shutdown()
        let stopDeadline = ContinuousClock.now + .seconds(5)
        while outcome.withLock({ $0 != .finished }) && ContinuousClock.now < stopDeadline {
            if case .failed = outcome.withLock({ $0 }) { break }
            usleep(2_000)
        }
        zap?.socket.close()
        context.terminate()
    }

    enum ProxyState: Equatable, Sendable {
        case starting
        case running
        case failed(String)
        case finished
    }

    /// The forwarding thread: makes and owns both sockets, binds, forwards until shutdown.
    private static func proxyThread(
        _ configuration: RelayConfiguration, context: Context, outcome: borrowing Mutex<ProxyState>
    ) {
        do {
            let upstream = try context.makeSocket(.xsub)
            let downstream = try context.makeSocket(.xpub)
            defer {
                upstream.close()
                downstream.close()
            }
            for socket in [upstream, downstream] {
                try socket.setOption(.linger, 0)
                try socket.setOption(.heartbeatInterval, 5_000)
                try socket.setOption(.heartbeatTimeout, 15_000)
            }
            try upstream.setOption(.maxMessageSize, 64 << 20)
            try downstream.setOption(.maxMessageSize, configuration.maximumSubscriptionMessageBytes)
            try downstream.setOption(.xpubManual, true)
            try upstream.setOption(.receiveHighWaterMark, configuration.highWaterMark * 10)
            try downstream.setOption(.sendHighWaterMark, configuration.highWaterMark)
            if let security = configuration.security, let secretKey = security.certificate.secretKey {
                try downstream.setOption(.curveServer, true)
                try downstream.setOption(.curveSecretKey, secretKey)
                try downstream.setOption(.zapDomain, ZAPHandler.domain)
                try downstream.setOption(.zapEnforceDomain, true)
                if let serverKey = configuration.upstreamServerKey {
                    try upstream.setOption(.curveServerKey, serverKey)
                    try upstream.setOption(.curvePublicKey, security.certificate.publicKey)
                    try upstream.setOption(.curveSecretKey, secretKey)
                }
            }
            do {
                let previous = umask(0o077)
                defer { umask(previous) }
                try downstream.bind(configuration.downstream)
            } catch {
                outcome.withLock {
                    $0 = .failed("cannot bind \(configuration.downstream): \(error.message)")
                }
                return
            }
            try upstream.connect(configuration.upstream)
            // Everything from upstream, whatever the subscribers ask: the XPUB filters per
            // subscriber, and the upstream sees one fixed subscription from us.
            try upstream.subscribe("")
            outcome.withLock { $0 = .running }
            try forward(from: upstream, to: downstream)
            outcome.withLock { $0 = .finished }
        } catch {
            outcome.withLock { $0 = .failed("\(error)") }
        }
    }

    /// Passes messages down and honours the protocol's subscriptions until the context is shut
    /// down (then returns normally). A bounded number of messages per turn keeps either
    /// direction from starving the other.
    private static func forward(from upstream: Socket, to downstream: Socket) throws(ZMQError) {
        var poller = Poller()
        let upstreamItem = poller.add(upstream)
        let downstreamItem = poller.add(downstream)
        do throws(ZMQError) {
            while true {
                let ready = try poller.poll(timeoutMilliseconds: 1_000)
                if ready.isInterrupted { continue }
                if ready.isReadable(upstreamItem) {
                    for _ in 0..<1_000 {
                        guard let frames = try upstream.receive(dontWait: true) else { break }
                        // XPUB never blocks: a subscriber over its high-water mark misses it.
                        try downstream.send(frames, dontWait: true)
                    }
                }
                if ready.isReadable(downstreamItem) {
                    for _ in 0..<1_000 {
                        guard let frames = try downstream.receive(dontWait: true) else { break }
                        guard frames.count == 1, let message = frames.first else { continue }
                        switch SubscriptionFilter.decide(message) {
                        case .subscribe(let prefix): try downstream.setOption(.subscribe, prefix)
                        case .unsubscribe(let prefix): try downstream.setOption(.unsubscribe, prefix)
                        case .ignore: continue
                        }
                    }
                }
            }
        } catch  where error.isTerminated {
            return
        }
    }
}
