import CountriesCore
import Foundation
import SystemSupport
import ZeroMQ

/// Sends requests to the elected writer's command endpoint over one DEALER and hands its
/// replies back, byte for byte, to the clients that asked (docs/HA.md, "Commits").
///
/// Each forwarded request goes out as `[token][empty][body]`: the writer's ROUTER sees a REQ-like
/// peer, handles it as any client's request (same bytes, same id), and its reply comes back
/// under the token, which names the client's envelope here. The DEALER queues only on a
/// finished connection (`ZMQ_IMMEDIATE`), so a writer that cannot be reached (down, or CURVE
/// refused this replica's key) makes ``forward(_:to:now:)`` say no at once and the replica
/// commits itself. A request whose reply does not come within ``replyTimeout`` is answered
/// `unavailable` ("retry with the same id"): the writer may or may not have committed it.
///
/// Used from the service's thread only.
final class ChangeForwarder {
    /// How long a forwarded request waits for the writer's reply: a commit's etcd timeout (1 s)
    /// and a batch's worth of margin.
    static let replyTimeout: Duration = .seconds(2)
    /// How long a replica commits its own changes after a forwarded one got no reply in time,
    /// before it tries the writer again: a writer that takes requests and answers none (hung,
    /// or an endpoint in its election key that is not a replica's) costs one timeout per pause,
    /// not one per change, for as long as its key stands.
    static let silencePause: Duration = .seconds(10)
    /// Most requests waiting for the writer's reply at once; beyond it, requests are handled here.
    static let maximumPending = 10_000
    /// Most bytes of requests the DEALER queues for a writer that does not read (hung, or
    /// slow): its send high-water mark is this over the largest request, 256 requests, and past
    /// it requests are handled here. A request's time running out does not take it out of that
    /// queue, so the bound is the queue's own: with the mark at ``maximumPending``, 10,000
    /// bodies padded to the 64 KiB a request may have held 640 MiB, and expiring them let as many
    /// more in.
    static let maximumQueuedBytes = 16 << 20
    /// The DEALER's send high-water mark, in requests.
    static var queuedRequests: Int32 { Int32(maximumQueuedBytes / Limits.maximumRequestBytes) }

    /// The DEALER, for the service's poller.
    let socket: Socket
    /// The endpoint connected to, if any.
    private(set) var connected: String?
    private var connectedAt: ContinuousClock.Instant?
    private var pending: [UInt64: Pending] = [:]
    /// Tokens in the order sent, which is the order of their deadlines (each is its sending
    /// plus ``replyTimeout``); answered ones are skipped when they reach the front.
    private var order: [UInt64] = []
    private var orderHead = 0
    /// Pending requests per client peer, for ``hasPending(peer:)``.
    private var pendingByPeer: [Data: Int] = [:]
    private var nextToken: UInt64 = 1
    /// Changes sent to the writer since start (`countries_forwarded_changes_total`): each paid
    /// this replica's hop, which a client told the writer spares (docs/PROTOCOL.md, "Clients of
    /// replicas").
    private(set) var forwarded: UInt64 = 0
    private let logger: Logger
    /// The endpoint whose refusal was logged last, so a writer that cannot be reached is logged
    /// once.
    private var unreachableLogged: String?
    /// The writer that let a forwarded request's time run out, and until when it is passed over.
    private var silent: (endpoint: String, until: ContinuousClock.Instant)?

    private struct Pending {
        var envelope: [Data]
        var deadline: ContinuousClock.Instant
        /// The writer it was sent to.
        var endpoint: String
    }

    /// A DEALER in `context`; with `security`, it signs in to the writer with the service's own
    /// key pair (replicas share it: docs/SECURITY.md, "Replicas").
    init(context: Context, security: ServerSecurity?, logger: Logger) throws(ZMQError) {
        socket = try context.makeSocket(.dealer)
        self.logger = logger
        do {
            try socket.setOption(.linger, 0)
            try socket.setOption(.immediate, true)
            try socket.setOption(.sendHighWaterMark, Self.queuedRequests)
            try socket.setOption(.receiveHighWaterMark, Int32(Self.maximumPending))
            // The writer's endpoint comes from its election key, anyone's who can write to etcd:
            // a frame larger than any reply is dropped by libzmq with its connection.
            try socket.setOption(.maxMessageSize, Int64(Reply.maximumBytes))
            if let certificate = security?.certificate, let secretKey = certificate.secretKey {
                try socket.setOption(.curveServerKey, certificate.publicKey)
                try socket.setOption(.curvePublicKey, certificate.publicKey)
                try socket.setOption(.curveSecretKey, secretKey)
            }
        } catch {
            socket.close()
            throw error
        }
    }

    /// What starts each token frame: the writer sees it in a request's envelope and never
    /// forwards that request again (two replicas that each take the other for the writer for a
    /// moment would pass it back and forth).
    // Made on each use, not kept in a global: LeakSanitizer reported the `static let` Data's
    // storage as leaked from a replica that forwarded (most likely it cannot see a reference
    // kept in the enum's spare bits).
    static var marker: Data { Data("countries-forwarded:".utf8) }

    /// Whether a request came from another replica's forwarder (its envelope is the forwarder's
    /// routing id, a token frame and the delimiter).
    static func isForwarded(_ envelope: [Data]) -> Bool {
        envelope.count == 3 && envelope[1].count == marker.count + 8 && envelope[1].starts(with: marker)
    }

    /// Whether `peer` has forwarded requests not answered yet.
    func hasPending(peer: Data) -> Bool { pendingByPeer[peer, default: 0] > 0 }

    /// Sends `request` to the writer at `endpoint`; false when it could not be sent (no
    /// connection to the writer yet, too many waiting for a reply, or ``queuedRequests`` not
    /// yet taken by the writer): then the caller handles it.
    func forward(_ request: IncomingRequest, to endpoint: String, now: ContinuousClock.Instant) -> Bool {
        guard pending.count < Self.maximumPending else { return false }
        if let silent, silent.endpoint == endpoint, now < silent.until { return false }
        if connected != endpoint { connect(to: endpoint) }
        let token = nextToken
        var tokenFrame = Self.marker
        withUnsafeBytes(of: token.bigEndian) { tokenFrame.append(contentsOf: $0) }
        let sent: Bool
        do {
            sent = try socket.send([tokenFrame, Data()] + request.body.map { Data($0) }, dontWait: true)
        } catch {
            sent = false
        }
        guard sent else {
            // Just connected: the handshake takes a moment, and this change is committed here.
            if unreachableLogged != endpoint, let connectedAt, now - connectedAt > .seconds(1) {
                unreachableLogged = endpoint
                logger.log(
                    .warning,
                    "the writer at \(endpoint) cannot be reached or takes no more requests (not connected, not reading them, or its CURVE allow-list lacks this service's key: docs/SECURITY.md, \"Replicas\"); this replica commits its own changes meanwhile"
                )
            }
            return false
        }
        unreachableLogged = nil
        nextToken &+= 1
        forwarded &+= 1
        pending[token] = Pending(
            envelope: request.envelope, deadline: now + Self.replyTimeout, endpoint: endpoint)
        order.append(token)
        pendingByPeer[UnreadReplies.peer(of: request.envelope), default: 0] += 1
        return true
    }

    /// The writer's replies received so far, each to its client, unchanged.
    func receiveReplies() -> [Outgoing] {
        var replies: [Outgoing] = []
        while let frames = try? socket.receive(dontWait: true) {
            guard frames.count == 3, frames[0].count == Self.marker.count + 8, frames[1].isEmpty else {
                continue
            }
            let token = frames[0].dropFirst(Self.marker.count).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            // It answers again (even late): no longer passed over.
            silent = nil
            // A reply after its request timed out: the client was told to retry with its id.
            guard let waiting = settle(token) else { continue }
            replies.append(.reply(envelope: waiting.envelope, body: Array(frames[2])))
        }
        return replies
    }

    /// The requests whose reply is overdue at `now`, answered `unavailable`.
    func expire(now: ContinuousClock.Instant) -> [Outgoing] {
        var overdue: [UInt64] = []
        // Only the writer connected now is passed over, and only for its own silence: requests
        // sent to one that was replaced since say nothing of the new one.
        var connectedWasSilent = false
        while let token = oldestPending(), let waiting = pending[token], waiting.deadline <= now {
            overdue.append(token)
            if waiting.endpoint == connected { connectedWasSilent = true }
            orderHead += 1
        }
        guard !overdue.isEmpty else { return [] }
        if connectedWasSilent, let connected, silent?.endpoint != connected || (silent?.until ?? now) <= now {
            logger.log(
                .warning,
                "the writer at \(connected) answered no forwarded change within \(Self.replyTimeout); this replica commits its own changes for \(Self.silencePause) before it tries the writer again"
            )
            silent = (connected, now + Self.silencePause)
        }
        let refusal = Reply(
            error: CountriesError(
                .unavailable,
                "the writer replica did not answer within \(Self.replyTimeout): the change may or may not have been applied; retry with the same id"
            )
        ).encoded(as: [UInt8].self)
        return overdue.compactMap { token in
            settle(token).map { .reply(envelope: $0.envelope, body: refusal) }
        }
    }

    /// The earliest deadline of a pending request, for the poll's timeout.
    var nextDeadline: ContinuousClock.Instant? { oldestPending().flatMap { pending[$0]?.deadline } }

    /// The oldest token still waiting (the front of ``order``, answered ones dropped).
    private func oldestPending() -> UInt64? {
        while orderHead < order.count, pending[order[orderHead]] == nil { orderHead += 1 }
        if orderHead > 1_024, orderHead * 2 > order.count {
            order.removeFirst(orderHead)
            orderHead = 0
        }
        return orderHead < order.count ? order[orderHead] : nil
    }

    /// Closes the socket (before the context ends). Pending requests get no reply: their clients
    /// retry elsewhere with the same id.
    func close() {
        socket.close()
    }

    private func settle(_ token: UInt64) -> Pending? {
        guard let waiting = pending.removeValue(forKey: token) else { return nil }
        let peer = UnreadReplies.peer(of: waiting.envelope)
        let left = pendingByPeer[peer, default: 1] - 1
        pendingByPeer[peer] = left > 0 ? left : nil
        return waiting
    }

    /// Connects to the writer at `endpoint` ahead of the first change to forward: the handshake
    /// is then done when changes come, where each change sent before it is committed here.
    func prepare(for endpoint: String) {
        if connected != endpoint { connect(to: endpoint) }
    }

    private func connect(to endpoint: String) {
        if let connected { try? socket.disconnect(connected) }
        connected = nil
        do {
            try socket.connect(endpoint)
            connected = endpoint
            connectedAt = .now
        } catch {
            logger.log(.warning, "cannot connect to the writer at \(endpoint): \(error)")
        }
    }
}

@available(*, unavailable) extension ChangeForwarder: Sendable {}
