import CountriesCore
import CountriesSockets
import Foundation
@preconcurrency import Glibc
import Metrics
import SystemSupport
import ZeroMQ

/// A forwarder for fan-out across hosts: an XSUB connected upstream, subscribed to everything,
/// and an XPUB bound for subscribers, in manual mode so that only the protocol's topics are
/// honoured as subscriptions and no subscriber holds more than its bounds
/// (``ServerSockets/makeEventSocket(role:countsConnections:bounds:wholeStream:)``). Events and
/// heartbeats travel down unchanged, so `watch`, `select` and `on-change` work through it as
/// they do against the service (they still send commands to the service itself).
///
/// It forwards only messages of the protocol's shape (``EventShape``: two frames, a topic, no
/// larger than the largest event of that topic), without copying the large ones, and only while
/// no run of messages one subscriber could be left holding is over its byte budget
/// (``ForwardingWindow``); every subscriber with an honoured subscription gets every topic, so
/// that budget holds for each. What it drops is counted in the log.
///
/// Not `zmq_proxy`: it passes every subscription up and lets libzmq store each, a trie node
/// per byte of its prefix, and forwards whatever the publisher sends.
///
/// One thread, as in the service: ``init(_:logger:)`` binds (a busy port is an error at start),
/// ``run(stopOn:)`` polls both sockets, the ZAP handler, the monitor and the stop signal
/// together. What it shares with the service (CURVE, binding, SIGHUP) is ``ServerSockets``.
public final class Relay {
    /// The configuration the relay runs with.
    public let configuration: RelayConfiguration
    /// The downstream endpoint actually bound (an ephemeral tcp port resolved).
    public let boundEndpoint: String

    private let sockets: ServerSockets
    private let upstream: Socket
    private let downstream: Socket
    private let logger: Logger
    private var window: ForwardingWindow
    /// Messages not forwarded, logged a few at a time with a count of the rest.
    private var drops = RefusalLog(noun: "dropped messages")
    /// Where the loop publishes its metrics (`relay --metrics`), or nil.
    private let board: MetricsBoard<RelayMetrics>?
    /// What the loop counts for them.
    private var counts = RelayMetrics()
    /// How often the loop publishes its metrics.
    static let metricsInterval = Duration.milliseconds(500)
    /// Five default heartbeats without a message from upstream: the relay connects to it anew
    /// (``SilenceReconnection``), and again as often while the silence lasts.
    static let reconnectAfter = Duration.seconds(5)

    /// Binds the downstream endpoint and connects upstream; throws a ``ServiceError`` that says
    /// what to fix, having given back whatever it took.
    ///
    /// With a `board`, the loop publishes a ``RelayMetrics`` snapshot on it every
    /// ``metricsInterval`` (docs/OPERATIONS.md).
    public init(
        _ configuration: RelayConfiguration, logger: Logger, metrics board: MetricsBoard<RelayMetrics>? = nil
    ) throws(ServiceError) {
        self.configuration = configuration
        self.logger = logger
        self.board = board
        window = configuration.forwardingWindow
        // Frames of megabytes come and go here; glibc's moving threshold kept 15 MiB more
        // resident at the peak with resets of 16 MB (``LargeBlocks``).
        LargeBlocks.mapEach(from: 1 << 20)
        try ServerSockets.checkExposure(
            [configuration.downstream], security: configuration.security,
            allowsInsecure: configuration.allowsInsecureEndpoints, risk: "read every change")
        let sockets = try ServerSockets(security: configuration.security, logger: logger)
        var started = false
        defer { if !started { sockets.close() } }
        do {
            upstream = try sockets.makeSocket(.xsub)
            downstream = try sockets.makeEventSocket(
                role: "relay", countsConnections: true, bounds: configuration.subscriberBounds,
                wholeStream: true)
            for socket in [upstream, downstream] { try socket.setOption(.linger, 0) }
            // No frame larger than the largest event: libzmq drops an upstream that sends one,
            // before taking it in, and never reconnects it: the loop does, after a silence.
            try upstream.setOption(.maxMessageSize, Int64(EventShape.maximumBodyBytes))
            try upstream.setOption(.receiveHighWaterMark, configuration.upstreamHighWaterMark)
            try downstream.setOption(.sendHighWaterMark, configuration.highWaterMark)
            if let security = configuration.security, let secretKey = security.certificate.secretKey,
                let serverKey = configuration.upstreamServerKey
            {
                try upstream.setOption(.curveServerKey, serverKey)
                try upstream.setOption(.curvePublicKey, security.certificate.publicKey)
                try upstream.setOption(.curveSecretKey, secretKey)
            }
        } catch {
            throw ServiceError(.sockets, "could not set up ZeroMQ: \(error)")
        }
        boundEndpoint = try sockets.bind(downstream, to: configuration.downstream, role: "relay")
        do {
            try upstream.connect(configuration.upstream)
            // Everything from upstream, whatever the subscribers ask: the XPUB filters per
            // subscriber, and the upstream sees one fixed subscription from us.
            try upstream.subscribe("")
        } catch {
            throw ServiceError(
                .sockets,
                "cannot connect to the upstream \(configuration.upstream): \(error.message); use tcp://HOST:PORT or ipc:///path"
            )
        }
        self.sockets = sockets
        started = true
    }

    /// Forwards until `stop` becomes readable (SIGHUP reloads the allow-lists), then closes.
    /// A bounded number of messages per turn keeps either direction from starving the other.
    public func run(stopOn stop: any StopSource) throws(ServiceError) {
        defer { sockets.close() }
        logger.log(
            .info,
            "relaying \(configuration.upstream) to \(boundEndpoint)\(configuration.security == nil ? "" : " (CURVE)")"
        )
        var poller = Poller()
        let upstreamItem = poller.add(upstream)
        let downstreamItem = poller.add(downstream)
        let stopItem = poller.add(fileDescriptor: stop.fileDescriptor)
        sockets.register(in: &poller)
        var nextMetrics = ContinuousClock.now
        var silence = UpstreamSilence(upstream: configuration.upstream, since: .now)
        var reconnection = SilenceReconnection(after: Self.reconnectAfter)
        serving: while true {
            if let line = silence.check(now: .now) { logger.log(.warning, line) }
            if reconnection.isDue(lastHeard: silence.lastHeard, now: .now) {
                upstream.connectAnew([configuration.upstream])
            }
            if let board {
                let now = ContinuousClock.now
                if now >= nextMetrics {
                    counts.subscribers = sockets.connections
                    counts.upstreamSilenceSeconds = silence.lastMessage.map {
                        Double((now - $0) / .milliseconds(1)) / 1000
                    }
                    board.publish(counts, at: now)
                    nextMetrics = now + Self.metricsInterval
                }
            }
            let ready: PollResult
            do {
                // Nothing is due but the metrics, the silence's warning and what the sockets bring.
                let due = [
                    board == nil ? nil : nextMetrics, silence.nextCheck,
                    reconnection.deadline(lastHeard: silence.lastHeard),
                ].compactMap { $0 }.min()
                let timeout = due.map { max(0, ($0 - .now).millisecondsRoundedUp) } ?? -1
                ready = try poller.poll(timeoutMilliseconds: timeout)
            } catch {
                throw ServiceError(.sockets, "polling failed: \(error)")
            }
            if ready.isInterrupted { continue }
            sockets.handle(ready)
            if ready.isReadable(upstreamItem) {
                if let line = silence.heard(now: .now) { logger.log(.info, line) }
                for _ in 0..<1_000 {
                    guard let message = try? upstream.receiveHeld(dontWait: true) else { break }
                    forward(message)
                }
            }
            if ready.isReadable(downstreamItem) {
                sockets.applySubscriptions()
            }
            if ready.isReadable(stopItem) {
                for reason in stop.drain() {
                    if reason == SIGHUP {
                        sockets.reloadAllowLists()
                        continue
                    }
                    logger.log(.info, "\(stop.describe(reason)): stopping the relay")
                    break serving
                }
            }
        }
    }

    /// Forwards `message` if it has the protocol's shape and fits the window; logs it if not.
    private func forward(_ message: HeldMessage) {
        let reason: String
        switch message.withBuffers(EventShape.check) {
        case .failure(let flaw):
            reason = "it has \(flaw)"
        case .success(let topic):
            let size = ForwardingWindow.weight(bytes: message.byteCount, frames: message.count)
            guard window.admit(size) else {
                reason =
                    "this \(topic.rawValue) of \(size) bytes would make the last \(window.messages) messages, what one subscriber that stops reading can hold, larger than \(window.bytes) bytes; subscribers catch up from the service"
                break
            }
            do {
                // XPUB never blocks: a subscriber over its high-water mark misses it.
                try downstream.send(message, dontWait: true)
                if board != nil { counts.forwarded[topic.rawValue, default: 0] += 1 }
            } catch {
                logger.log(.warning, "forwarding failed: \(error)")
            }
            return
        }
        counts.dropped += 1
        if let line = drops.record("did not forward a message from upstream: \(reason)", now: .now) {
            logger.log(.warning, line)
        }
    }
}

@available(*, unavailable) extension Relay: Sendable {}
