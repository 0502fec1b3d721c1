import CountriesCore
import CountriesReplication
import CountriesSockets
import ZeroMQ

/// Everything `countries serve` can be told, with its defaults (the command line shows these).
public struct ServiceConfiguration: Sendable {
    /// Where commands are accepted (REQ/REP; the service binds a ROUTER).
    public var commandEndpoint = Defaults.commandEndpoint
    /// Where events are published (PUB).
    public var eventsEndpoint = Defaults.eventsEndpoint
    /// The SQLite file (`:memory:` for SQLite's in-memory database); nil keeps the state in
    /// memory only, without SQLite.
    public var storePath: String? = Defaults.storePath
    /// A replicated service's etcd cluster (docs/HA.md); when set, the state lives there and
    /// `storePath` is ignored.
    public var etcd: EtcdConfiguration?
    /// The list a new store starts from, and that `reset` puts back.
    public var seed: [Country] = SeedList.standard
    /// How often a heartbeat is published.
    public var heartbeatInterval = Defaults.heartbeatInterval
    /// The version `status` reports.
    public var version = "0.0.0"
    /// Most requests handled in one batch (one transaction, one fsync).
    public var maximumBatch = 256
    /// Most `history` requests in one batch: each reads and encodes a page of up to
    /// ``Limits/historyPageEvents`` events, and replies go out when the batch is done, so this
    /// bounds how long a flood of them keeps other clients waiting.
    public var maximumHistoryPerBatch = 8
    /// Messages held per subscriber before the PUB socket drops for that subscriber
    /// (ZMQ_SNDHWM): a slow subscriber loses events, never slows the service.
    public var subscriberHighWaterMark: Int32 = 10_000
    /// Bytes one subscriber that stops reading can be left holding: no run of
    /// ``subscriberHighWaterMark`` + 1 events and heartbeats published in a row is larger
    /// (``ForwardingWindow``; every subscriber gets the whole stream, its SUB filters). 24 MiB,
    /// as on the relay, takes one reset of the largest list in a run and any run of the other
    /// events; without it such a subscriber kept every reset published (16 MB each).
    public var subscriberBytes = 24 << 20
    /// Largest frame the command socket accepts (ZMQ_MAXMSGSIZE); a peer sending more is
    /// disconnected. Twice the largest request body (``CountriesCore/Limits/maximumRequestBytes``),
    /// so a body a little over it is still answered `too_large`.
    public var maximumMessageBytes: Int64 = 128 << 10
    /// Bytes of requests libzmq may queue from one command peer for the loop: a peer that sends
    /// faster than the loop reads is held back there (libzmq stops reading its connection), never
    /// buffered past it. Counted in frames of ``maximumMessageBytes``
    /// (``commandReceiveHighWaterMark``), since libzmq counts its queues in messages.
    public var maximumQueuedRequestBytes = 16 << 20
    /// Bytes of requests one batch takes (at least one request): the loop holds no more of them
    /// at once, however many peers send big ones.
    public var maximumBatchRequestBytes = 4 << 20
    /// What one subscriber connection may send the event socket before it is dropped
    /// (docs/RELIABILITY.md, "Bounds per peer").
    public var subscriberBounds = SubscriberBounds()
    /// Replies held per command peer that does not read them (ZMQ_SNDHWM); past it the ROUTER
    /// drops that peer's replies, nobody else's. A page of `history` is at most 64 KiB.
    public var replyHighWaterMark: Int32 = 1_000
    /// Bytes of replies one command peer may leave unread: past it, its requests are refused
    /// (`too_large`, nothing changed) until it reads. One reply always goes out, however big
    /// (a `list` of the longest list is about 16 MB), so a peer holds at most this plus one.
    public var maximumUnreadReplyBytes = 32 << 20
    /// Bytes of replies all command peers together may leave unread: past it, a peer holding
    /// more than ``unreadReplyBytesOfAReader`` is not answered until it reads (its requests are
    /// dropped, nothing changed), and `list`, `reset` and `history` are refused `too_large` for
    /// everyone, while small replies to clients that read go on (``ReplyAdmission``). So the
    /// service holds about this, one big reply more, and a reader's allowance per connection,
    /// however many peers stop reading.
    public var maximumUnreadReplyBytesInAll = 256 << 20
    /// What a peer may hold unread and still be answered once all peers together hold
    /// ``maximumUnreadReplyBytesInAll``: a reader's replies on their way.
    public var unreadReplyBytesOfAReader = 16 << 10
    /// Bytes of replies one batch is expected to make (`list`, `reset`, `history` estimated
    /// before they are read): a batch stops taking requests past it, so another client's
    /// request waits behind at most this much work (docs/RELIABILITY.md, "Bounds per peer").
    public var maximumBatchReplyBytes = 8 << 20
    /// The window of ``subscriberBytes`` over what a subscriber can hold.
    var publicationWindow: ForwardingWindow {
        ForwardingWindow.forSubscribers(highWaterMark: subscriberHighWaterMark, bytes: subscriberBytes)
    }
    /// The bounds of ``ReplyAdmission``, from the three above.
    var replyBounds: ReplyAdmission.Bounds {
        ReplyAdmission.Bounds(
            perPeer: maximumUnreadReplyBytes, inAll: maximumUnreadReplyBytesInAll,
            ofAReader: unreadReplyBytesOfAReader)
    }
    /// CURVE encryption and client allow-lists; nil serves plaintext.
    public var security: ServerSecurity?
    /// Whether plaintext tcp endpoints that are not loopback are allowed (`--insecure`).
    public var allowsInsecureEndpoints = false
    /// How long queued replies and events may linger at shutdown.
    public var lingerOnShutdown: Duration = .milliseconds(500)

    /// The defaults.
    public init() {}

    /// The command socket's ZMQ_RCVHWM: as many frames of ``maximumMessageBytes`` as
    /// ``maximumQueuedRequestBytes`` holds, at least one. With 10,000 frames of 1 MiB, two peers
    /// sending while a commit waited on a slow disk grew the service by 1.7 GiB in 8 s
    /// (docs/RELIABILITY.md, "Requests in bytes").
    public var commandReceiveHighWaterMark: Int32 {
        Int32(clamping: max(1, Int64(maximumQueuedRequestBytes) / max(1, maximumMessageBytes)))
    }
}

extension ServiceConfiguration {
    /// Protected mode for both endpoints
    /// (``ServerSockets/checkExposure(_:security:allowsInsecure:risk:)``).
    func checkExposure() throws(ServiceError) {
        try ServerSockets.checkExposure(
            [commandEndpoint, eventsEndpoint], security: security, allowsInsecure: allowsInsecureEndpoints,
            risk: "read and change the list")
        // CURVE protects the service's endpoints, not its talk with etcd: plain HTTP to another
        // host lets anyone on the path read and rewrite the list.
        guard let etcd, !allowsInsecureEndpoints else { return }
        for url in etcd.endpoints where url.lowercased().hasPrefix("http://") {
            let hostAndPort = url.dropFirst("http://".count).prefix { $0 != "/" }
            guard !Endpoint.isLoopbackOrLocal("tcp://" + hostAndPort) else { continue }
            throw ServiceError(
                .unsafeEndpoint,
                "refusing to keep the list in etcd at \(url) over plain HTTP: anyone on the network path could read and change it. Use https:// (etcd with TLS), an etcd member on this host, or pass --insecure to accept the risk"
            )
        }
    }
}
