import CountriesCore
import CountriesReplication
import CountriesSockets
import Foundation
@preconcurrency import Glibc
import Metrics
import SystemSupport
import ZeroMQ

/// The state service: owns the list, answers commands on a ROUTER socket (plain REQ clients
/// work), and publishes every committed change and a heartbeat on an XPUB socket (a PUB that
/// honours only the protocol's topics as subscriptions).
///
/// One thread runs ``run(stopOn:)`` and owns both sockets; one `zmq_poll` waits on the command
/// socket and the signal pipe together, with the next heartbeat as its timeout. What it shares
/// with the relay (CURVE, binding, monitors, SIGHUP) is ``ServerSockets``; the store is chosen
/// by ``StoreOpener``; requests come off the wire as ``IncomingRequest``s.
public final class StateService {
    /// The configuration the service runs with.
    public let configuration: ServiceConfiguration
    /// The endpoints actually bound (ephemeral tcp ports resolved), command first.
    public private(set) var boundEndpoints: [String] = []

    private let sockets: ServerSockets
    private let commands: Socket
    private let events: Socket
    private let handler: CommandHandler
    /// Bytes of replies each command peer has not taken yet.
    private let unreadReplies = UnreadReplies()
    private let logger: Logger
    private let startedAt = ContinuousClock.now
    /// One writer per store: held from before the binds until ``run(stopOn:)`` ends.
    private let writerLock: WriterLock?
    /// A replica's link to etcd and the other replicas: the event log it publishes from, the
    /// quorum it heartbeats by, the election of the one writer and the forwarding of changes to
    /// it (docs/HA.md); nil for a store of one service.
    private let replica: ReplicaLink?
    /// Publishes events and heartbeats on `events`.
    private let publisher: EventPublisher
    /// Whom the last grouped commit answered, so the next waits briefly for them.
    private var cohort = CommitCohort()
    /// Takes requests off `commands` within a batch's limits.
    private let reader: RequestReader
    /// Where the loop publishes its metrics (`serve --metrics`), or nil.
    private let board: MetricsBoard<ServiceMetrics>?
    /// How often the loop publishes them: a scrape sees counts at most this old.
    static let metricsInterval = Duration.milliseconds(500)

    /// Opens the store and binds both sockets; throws a ``ServiceError`` that says what to fix,
    /// having given back whatever it took (sockets, context, the writer lock).
    ///
    /// With a `board`, the loop publishes a ``ServiceMetrics`` snapshot on it every
    /// ``metricsInterval`` (docs/OPERATIONS.md).
    public init(
        configuration: ServiceConfiguration, logger: Logger,
        metrics board: MetricsBoard<ServiceMetrics>? = nil
    ) throws(ServiceError) {
        self.configuration = configuration
        self.logger = logger
        self.board = board
        // The request-id memory and the stores' buffers grow by blocks of megabytes while they
        // fill; glibc's moving threshold then kept about 17 MiB more resident than any live
        // block needs (docs/RELIABILITY.md, "The long soak"; ``LargeBlocks``).
        LargeBlocks.mapEach(from: 1 << 20)
        try configuration.checkExposure()
        let sockets = try ServerSockets(security: configuration.security, logger: logger)
        // Before the binds: a second service on the same store is refused before it takes a
        // port, and names the one that holds it.
        let writerLock: WriterLock?
        do {
            // Replicas of an etcd store are many writers by design; etcd orders them.
            writerLock = try WriterLock.acquire(
                storePath: configuration.etcd == nil ? configuration.storePath : nil)
        } catch {
            sockets.close()
            throw error
        }
        // From here on, a failure gives everything back.
        var started = false
        defer {
            if !started {
                sockets.close()
                writerLock?.release()
            }
        }
        do {
            commands = try sockets.makeServerSocket(.router, role: "commands")
            // An XPUB in manual mode, so only the protocol's topics are ever subscribed and no
            // subscriber holds more than its bounds: libzmq keeps a trie node per byte of each
            // prefix a peer asks for (a 1 MB prefix cost about 27 MB), and nothing is published
            // under any other prefix anyway. Its connections are the subscribers. Each gets the
            // whole stream (its SUB filters), so what one that stops reading holds is a run of
            // what was published, which the publisher's window bounds in bytes.
            events = try sockets.makeEventSocket(
                role: "events", countsConnections: true, bounds: configuration.subscriberBounds,
                wholeStream: true)
            for socket in [commands, events] {
                try socket.setOption(.linger, Int32(configuration.lingerOnShutdown / .milliseconds(1)))
            }
            try commands.setOption(.maxMessageSize, configuration.maximumMessageBytes)
            try commands.setOption(.receiveHighWaterMark, configuration.commandReceiveHighWaterMark)
            // Per peer: one that never reads its replies loses them past this, nobody else does.
            try commands.setOption(.sendHighWaterMark, configuration.replyHighWaterMark)
            try events.setOption(.sendHighWaterMark, configuration.subscriberHighWaterMark)
        } catch {
            throw ServiceError(.sockets, "could not set up ZeroMQ: \(error)")
        }
        boundEndpoints = [
            try sockets.bind(commands, to: configuration.commandEndpoint, role: "command"),
            try sockets.bind(events, to: configuration.eventsEndpoint, role: "events"),
        ]
        writerLock?.announce(endpoints: boundEndpoints)
        let start = startedAt
        let endpoints = boundEndpoints
        let version = configuration.version
        let health = configuration.etcd.map { ClusterHealth(quorumTimeout: $0.quorumTimeout) }
        var storeConfiguration = configuration
        if storeConfiguration.etcd?.replicaName.isEmpty == true {
            storeConfiguration.etcd?.replicaName = "\(StateService.hostName) \(boundEndpoints[0])"
        }
        do {
            // Opened after the binds succeed, so a busy port does not leave a new store behind.
            let store = try StoreOpener.open(storeConfiguration, health: health, logger: logger)
            handler = try CommandHandler(store: store, seed: configuration.seed, logger: logger) {
                CommandHandler.StatusInfo(
                    version: version,
                    uptimeSeconds: Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000,
                    endpoints: endpoints)
            }
        } catch {
            throw ServiceError(.store, error.description)
        }
        handler.unreadReplies = unreadReplies
        handler.measures = board != nil
        handler.replyBounds = configuration.replyBounds
        let loadedSeq = handler.state.seq
        publisher = EventPublisher(
            socket: events, publishedSeq: loadedSeq, window: configuration.publicationWindow, logger: logger)
        health?.recordPublished(loadedSeq)
        if let etcd = storeConfiguration.etcd, let health {
            let replica: ReplicaLink
            do {
                replica = try ReplicaLink(
                    etcd: etcd, health: health, loadedSeq: loadedSeq, seed: handler.resetSeed,
                    storeIdentity: handler.storeIdentity,
                    probeInterval: min(configuration.heartbeatInterval, .milliseconds(500)),
                    commandEndpoint: Self.advertised(boundEndpoints[0]), context: sockets.context,
                    security: configuration.security, logger: logger)
            } catch {
                throw ServiceError(
                    .sockets, "could not set up the event log's pipe or the forwarder: \(error)")
            }
            handler.writerStatus = { replica.election.role().statusValue }
            self.replica = replica
        } else {
            replica = nil
        }
        self.sockets = sockets
        self.writerLock = writerLock
        reader = RequestReader(
            commands: commands, configuration: configuration, authenticates: sockets.authenticates,
            logger: logger)
        started = true
    }

    /// This host's name, for a replica's default name.
    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The current state (for tests and the start-up log line).
    public var state: CountriesState { handler.state }

    /// Serves until `stop` becomes readable (a signal arrived; forever when nil), then closes the
    /// sockets with a bounded linger. The batch in hand is always finished first.
    ///
    /// `whenServing` is called once the loop is about to read its first request (the store is
    /// open and the sockets are bound, so a request sent now is answered), `whenStopping` as the
    /// shutdown begins: where `serve` tells systemd `READY=1` and `STOPPING=1`.
    public func run(
        stopOn stop: (any StopSource)?, whenServing: () -> Void = {}, whenStopping: () -> Void = {}
    ) throws(ServiceError) {
        replica?.start()
        defer {
            whenStopping()
            replica?.stop()
            sockets.close()
            logger.log(.info, "stopped at seq \(handler.state.seq)")
            writerLock?.release()
        }
        logger.log(
            .info,
            "serving commands on \(boundEndpoints[0]), events on \(boundEndpoints[1]); store \(handler.storeDescription); seq \(handler.state.seq), \(handler.state.count) countries"
        )
        var poller = Poller()
        let commandItem = poller.add(commands)
        let stopItem = stop.map { poller.add(fileDescriptor: $0.fileDescriptor) }
        let eventsItem = poller.add(events)
        let tailItem = replica.map { poller.add(fileDescriptor: $0.tail.fileDescriptor) }
        let forwarderItem = replica.map { poller.add($0.forwarder.socket) }
        sockets.register(in: &poller)
        whenServing()
        let interval = configuration.heartbeatInterval
        var nextHeartbeat = ContinuousClock.now
        var nextMetrics = ContinuousClock.now
        var batch: [IncomingRequest] = []
        batch.reserveCapacity(configuration.maximumBatch)

        serving: while true {
            let now = ContinuousClock.now
            if now >= nextHeartbeat {
                try stopIfStoreMoved(lost: handler.store.lostPlace())
                if let replica, case .follower(let writer) = replica.election.role() {
                    replica.forwarder.prepare(for: writer)
                }
                publishHeartbeat()
                nextHeartbeat = now + interval
            }
            if let board, now >= nextMetrics {
                var snapshot = handler.metrics()
                snapshot.forwardedChanges = replica?.forwarder.forwarded
                board.publish(snapshot, at: now)
                nextMetrics = now + Self.metricsInterval
            }
            var wakeup = min(nextHeartbeat, replica?.forwarder.nextDeadline ?? nextHeartbeat)
            if board != nil { wakeup = min(wakeup, nextMetrics) }
            let timeout = (wakeup - now).millisecondsRoundedUp
            let ready: PollResult
            do {
                ready = try poller.poll(timeoutMilliseconds: timeout)
            } catch {
                throw ServiceError(.sockets, "polling failed: \(error)")
            }
            if ready.isInterrupted { continue }
            sockets.handle(ready)
            handler.subscribers = sockets.connections
            if ready.isReadable(eventsItem) {
                sockets.applySubscriptions()
            }
            if let replica {
                if let tailItem, ready.isReadable(tailItem) {
                    replica.publishTail(observing: handler.observe) { entry in
                        publisher.publish(topic: entry.event.topic, seq: entry.event.seq, body: entry.body)
                    }
                    replica.health.recordPublished(publisher.publishedSeq)
                }
                replica.checkUnapplied(stateSeq: handler.state.seq)
                if let forwarderItem, ready.isReadable(forwarderItem) {
                    send(replica.forwarder.receiveReplies())
                }
                send(replica.forwarder.expire(now: .now))
            }
            if ready.isReadable(commandItem), replica == nil, !handler.groupsCommits {
                answerEachInTurn()
            } else if ready.isReadable(commandItem) {
                var load = RequestReader.Load()
                let full = readBatch(into: &batch, load: &load)
                forwardToWriter(&batch)
                if !batch.isEmpty {
                    if replica != nil {
                        if !full { gatherCohort(into: &batch, load: &load) }
                        let started = ContinuousClock.now
                        handler.handle(batch, emit: send)
                        cohort.committed(
                            peers: batch.lazy.map { UnreadReplies.peer(of: $0.envelope) },
                            took: .now - started)
                    } else {
                        handler.handle(batch, emit: send)
                    }
                    batch.removeAll(keepingCapacity: true)
                    // The batch's commit looked already; the heartbeat looks without a commit.
                    try stopIfStoreMoved(lost: handler.store.knownLostPlace)
                }
            }
            if let stopItem, ready.isReadable(stopItem), let stop {
                for reason in stop.drain() {
                    if reason == SIGHUP {
                        sockets.reloadAllowLists()
                        continue
                    }
                    logger.log(.info, "\(stop.describe(reason)): stopping at seq \(handler.state.seq)")
                    break serving
                }
            }
        }
    }

    /// Stops the service when its store's files were moved under it (``StateStore/lostPlace()``):
    /// it refuses every change from then on, and a supervisor's restart opens the file at the
    /// path again.
    private func stopIfStoreMoved(lost: String?) throws(ServiceError) {
        guard let lost else { return }
        logger.log(.error, lost)
        throw ServiceError(.store, lost)
    }

    /// Sends the requests the ``ForwardingDecision`` gives the elected writer to it, leaving the
    /// others (and those that could not be sent) in `batch`, in order.
    private func forwardToWriter(_ batch: inout [IncomingRequest]) {
        guard let replica, !batch.isEmpty else { return }
        let role = replica.election.role()
        guard case .follower = role else { return }
        let now = ContinuousClock.now
        batch.removeAll { request in
            let peer = UnreadReplies.peer(of: request.envelope)
            let decision = ForwardingDecision.decide(
                request, role: role, peerHasPending: replica.forwarder.hasPending(peer: peer),
                admitted: unreadReplies.admission(
                    of: peer, likely: { request.likelyReply }, within: configuration.replyBounds) == .answer)
            guard case .forward(let endpoint) = decision else { return false }
            return replica.forwarder.forward(request, to: endpoint, now: now)
        }
    }

    /// The command endpoint other replicas forward to: the bound one, with a wildcard host
    /// (`*`, `0.0.0.0`) replaced by this host's name.
    static func advertised(_ bound: String) -> String {
        for wildcard in ["tcp://*:", "tcp://0.0.0.0:"] where bound.hasPrefix(wildcard) {
            return "tcp://\(hostName):" + bound.dropFirst(wildcard.count)
        }
        return bound
    }

    /// Before a grouped commit: reads, for a moment, the requests of the clients the last one
    /// answered that have not sent again yet (``CommitCohort``). Only on a replica's commit to
    /// etcd, milliseconds long: a SQLite commit is as short as a client's turnaround, and
    /// waiting made 16 clients slower there (docs/BENCHMARKS.md, "Stop 27"). Not on a follower,
    /// whose changes go to the writer.
    private func gatherCohort(into batch: inout [IncomingRequest], load: inout RequestReader.Load) {
        if replica?.isFollower == true { return }
        guard let awaited = cohort.missing(from: batch.lazy.map { UnreadReplies.peer(of: $0.envelope) })
        else {
            return
        }
        reader.gather(
            awaited, into: &batch, load: &load, traces: handler.traces,
            listBytes: { handler.estimatedListBytes })
    }

    /// Answers the queued requests one at a time when requests share nothing (a store that
    /// does not group commits, no replicas): each is read, handled and its reply sent before
    /// the next is read, up to a batch's limits (its count, its `history` requests, its replies'
    /// bytes), so one pass of the loop is as bounded as a batch. The read that finds the queue
    /// empty is then the last call on the command socket, and the poller knows it is drained
    /// without asking libzmq again; reading to the end first cost one wake-up's worth of
    /// system calls more per request, before its answer (docs/BENCHMARKS.md, "Stop 49").
    ///
    /// A request is counted against the pass's limits after its reply is sent: the count only
    /// decides whether the next one is read in this pass, and before the reply it delayed it.
    private func answerEachInTurn() {
        var load = RequestReader.Load()
        let traces = handler.traces
        for _ in 0..<configuration.maximumBatch {
            guard reader.allowsMore(load),
                case .request(let request) = reader.next(received: traces ? .now : nil)
            else { return }
            handler.handle(CollectionOfOne(request), emit: send)
            reader.count(request, in: &load, listBytes: { handler.estimatedListBytes })
        }
    }

    /// Reads every request already queued, up to the batch's limits (and `limit` requests),
    /// without waiting (``RequestReader/read(into:load:limit:traces:listBytes:)``).
    private func readBatch(
        into batch: inout [IncomingRequest], load: inout RequestReader.Load, limit: Int = .max
    ) -> Bool {
        reader.read(
            into: &batch, load: &load, limit: limit, traces: handler.traces,
            listBytes: { handler.estimatedListBytes })
    }

    private func send(_ outgoing: [Outgoing]) {
        for item in outgoing {
            switch item {
            case .reply(let envelope, let body):
                do {
                    // ROUTER drops a reply to a peer that has gone; it never blocks. What the peer
                    // has not taken is counted until libzmq lets it go.
                    let peer = UnreadReplies.peer(of: envelope)
                    let counted = unreadReplies.add(body.count, for: peer)
                    try commands.send(envelope, then: body, dontWait: true, observer: counted)
                } catch {
                    logger.log(.warning, "sending a reply failed: \(error)")
                }
            case .publish(let topic, let seq, let body):
                publisher.publish(topic: topic, seq: seq, body: body)
            }
        }
    }

    /// A heartbeat with the seq of the last event published. A replica without a quorum, with a
    /// damaged log or whose publication trails what it knows is committed sends none.
    private func publishHeartbeat() {
        publisher.heartbeat(store: handler.storeIdentity, heldBecause: replica?.heartbeatHold())
    }
}

@available(*, unavailable) extension StateService: Sendable {}
