import CountriesCore
import Foundation
import ZeroMQ

/// Requests sent without blocking, for event loops that also wait on other things (a SUB
/// socket, stdin, signals): the Lazy Pirate pattern of ``CommandClient``, turned inside out,
/// with the same ``RetryMachine``.
///
/// One request is in flight at a time on one REQ socket; the others wait their turn in
/// order. A request that gets no reply within `timeout` is resent on a new socket with the
/// same bytes (same id), to the endpoint the machine names, until it ends: with a reply, or
/// failed (a change whose outcome is unknown says so, ``ClientError/Code/outcomeUnknown``). The
/// endpoint that answered is tried first next time, except that with several endpoints a change
/// goes first to the one `status` names as the elected writer (``WriterRoute``): the requester
/// asks `status` itself before such a change when its answer is missing or old, and reports
/// nothing of it.
public final class PendingRequests<Tag> {
    /// The outcome of one request.
    public enum Outcome {
        /// The service replied (a success or a refusal).
        case replied(Tag, Reply)
        /// No reply after every try (for a change: its outcome is unknown), or the reply was not
        /// protocol JSON.
        case failed(Tag, ClientError)
    }

    /// A request being tried.
    private struct Flight {
        /// The caller's tag; nil for the requester's own `status`, asked for the ``route``.
        var tag: Tag?
        var request: Request
        var body: Data
        var machine: RetryMachine
        var deadline: ContinuousClock.Instant
        /// What the last try that got something other than a reply got (a frame that is not one,
        /// or a socket that failed after sending), for the ending's words.
        var undecodable: ClientError?
    }

    /// The service's command endpoints, in the order given.
    public let endpoints: [String]
    private let timeout: Duration
    private let tries: Int
    /// One lazy socket per endpoint; only the one in use is open.
    private let sockets: [LazyRequestSocket]
    /// The endpoint in use: the last one that answered, or the one a retry moved to.
    private var current = 0
    private var queue: [(tag: Tag, request: Request)] = []
    private var inFlight: Flight?
    /// Which endpoint writes, as `status` last said: changes go there first.
    public private(set) var route: WriterRoute

    /// Creates an idle requester for one endpoint; nothing is connected until the first request.
    public convenience init(
        context: Context, endpoint: String, timeout: Duration = Defaults.requestTimeout,
        tries: Int = Defaults.requestTries,
        security: ClientSecurity? = nil
    ) {
        self.init(context: context, endpoints: [endpoint], timeout: timeout, tries: tries, security: security)
    }

    /// Creates an idle requester for replicas of one service at `endpoints` (at least one); a
    /// request gets at least one try on each.
    public init(
        context: Context, endpoints: [String], timeout: Duration = Defaults.requestTimeout,
        tries: Int = Defaults.requestTries,
        security: ClientSecurity? = nil
    ) {
        precondition(!endpoints.isEmpty, "PendingRequests needs an endpoint")
        self.endpoints = endpoints
        self.timeout = timeout
        self.tries = max(1, tries, endpoints.count)
        // The deadline alone ends a try here: nothing would read a watch on the connect.
        sockets = endpoints.map {
            LazyRequestSocket(context: context, endpoint: $0, security: security, watchesConnect: false)
        }
        route = WriterRoute(endpoints: endpoints)
    }

    /// The endpoint in use.
    public var endpoint: String { endpoints[current] }

    private var socket: LazyRequestSocket { sockets[current] }

    /// Whether nothing is in flight or queued.
    public var isIdle: Bool { inFlight == nil && queue.isEmpty }

    /// Queues a request; it is sent as soon as the ones before it are answered.
    public func send(_ request: Request, tag: Tag, now: ContinuousClock.Instant) -> [Outcome] {
        queue.append((tag, request))
        return startNext(now: now)
    }

    /// Adds the socket to wait on, if a request is in flight; returns its poller index.
    public func register(in poller: inout Poller) -> Int? {
        guard inFlight != nil, let socket = socket.current?.socket else { return nil }
        return poller.add(socket)
    }

    /// When ``tick(now:)`` must run next (the in-flight request's deadline).
    public var nextDeadline: ContinuousClock.Instant? { inFlight?.deadline }

    /// Reads a reply if the socket is readable; call after polling.
    public func receive(now: ContinuousClock.Instant) -> [Outcome] {
        guard var flight = inFlight, let socket = socket.current?.socket else { return [] }
        let frames: [Data]?
        do {
            frames = try socket.receive(dontWait: true)
        } catch {
            // Sent, then the socket failed: a change may have been applied, so the machine, not
            // this error, decides how the request ends.
            let problem = ClientError(
                .sockets, endpoint: endpoint, "receiving from \(endpoint) failed: \(error)")
            flight.undecodable = problem
            let step = flight.machine.failedAfterSending()
            inFlight = flight
            return follow(step, now: now)
        }
        guard let frames else { return [] }
        let step: RetryMachine.Step
        switch ClientError.reply(in: frames.last ?? Data(), answering: flight.request, from: endpoint)
        {
        case .success(let reply):
            step = flight.machine.received(reply)
        case .failure(let problem):
            // Not an answer to the change: its outcome is as unknown as after a timeout.
            flight.undecodable = problem
            step = flight.machine.receivedUndecodable()
        }
        inFlight = flight
        return follow(step, now: now)
    }

    /// Retries or fails a request whose deadline has passed.
    public func tick(now: ContinuousClock.Instant) -> [Outcome] {
        guard var flight = inFlight, now >= flight.deadline else { return [] }
        let step = flight.machine.timedOut()
        inFlight = flight
        return follow(step, now: now)
    }

    /// Ends every request now, for `reason` (the caller is stopping, say): the one in flight
    /// fails as unknown when it is a change (it may have been applied), as unanswered when it is
    /// a read; those still queued fail as never sent. Nothing is sent or waited for after.
    public func abandon(_ reason: String) -> [Outcome] {
        var outcomes: [Outcome] = []
        if let flight = inFlight, let tag = flight.tag {
            let error =
                flight.request.command.changes
                ? ClientError.outcomeUnknown(
                    id: flight.request.id, endpoints: endpoints, tries: tries, lastReply: nil,
                    unreadable: reason)
                : ClientError(.noReply, endpoint: endpoint, "no reply: \(reason)")
            outcomes.append(.failed(tag, error))
        }
        inFlight = nil
        socket.discard()
        for (tag, _) in queue {
            outcomes.append(.failed(tag, ClientError(.noReply, endpoint: endpoint, "not sent: \(reason)")))
        }
        queue.removeAll()
        return outcomes
    }

    /// Does what the machine said for the request in flight.
    private func follow(_ step: RetryMachine.Step, now: ContinuousClock.Instant) -> [Outcome] {
        guard let flight = inFlight else { return [] }
        switch step {
        case .send(let index):
            if index != current { socket.discard() }
            current = index
            return transmit(now: now)
        case .finish(let verdict):
            inFlight = nil
            var reply: Reply?
            if case .replied(let answer, let from) = verdict {
                current = from
                reply = answer
            } else {
                socket.discard()
            }
            guard let tag = flight.tag else {
                // The route's own `status`: without an answer, no writer is known for a while.
                if let writer = route.learn(writerField: reply?.status?.writer, from: current, now: now) {
                    current = writer
                }
                return startNext(now: now)
            }
            if flight.request.command.changes {
                route.changeEnded(answeredFrom: reply == nil ? nil : current, now: now)
            }
            let outcome: Outcome
            if let reply {
                outcome = .replied(tag, reply)
            } else {
                outcome = .failed(
                    tag,
                    .ending(
                        verdict, of: flight.request, endpoints: endpoints, tries: tries,
                        unusable: flight.undecodable, undecodable: flight.undecodable))
            }
            return [outcome] + startNext(now: now)
        }
    }

    private func fail(_ error: ClientError, now: ContinuousClock.Instant) -> [Outcome] {
        guard let flight = inFlight else { return [] }
        inFlight = nil
        socket.discard()
        guard let tag = flight.tag else {
            _ = route.learn(writerField: nil, from: current, now: now)
            return startNext(now: now)
        }
        if flight.request.command.changes { route.changeEnded(answeredFrom: nil, now: now) }
        return [.failed(tag, error)] + startNext(now: now)
    }

    private func startNext(now: ContinuousClock.Instant) -> [Outcome] {
        guard inFlight == nil, let next = queue.first else { return [] }
        // Before a change, the writer's endpoint, if its last answer is missing or old.
        let tag: Tag?
        let request: Request
        if next.request.command.changes, route.isDue(now: now) {
            (tag, request) = (nil, Request(command: .status))
        } else {
            queue.removeFirst()
            (tag, request) = (next.tag, next.request)
        }
        var machine = RetryMachine(
            endpoints: endpoints.count, tries: tries, first: current, changes: request.command.changes,
            store: request.ifStore)
        guard case .send(let index) = machine.start() else { return [] }
        current = index
        inFlight = Flight(
            tag: tag, request: request, body: request.encoded(), machine: machine, deadline: now)
        return transmit(now: now)
    }

    /// Sends the request in flight on the current endpoint's socket (a new one after a timeout:
    /// REQ cannot send again before it receives).
    private func transmit(now: ContinuousClock.Instant) -> [Outcome] {
        guard var flight = inFlight else { return [] }
        flight.deadline = now + timeout
        inFlight = flight
        if socket.current != nil, flight.machine.sent > 1 { socket.discard() }
        do {
            let socket = try self.socket.connected().socket
            // A fresh REQ socket queues the message even before it connects; false is only a
            // full pipe, which the deadline then handles like a lost reply.
            _ = try socket.send([flight.body], dontWait: true)
        } catch {
            let step = flight.machine.couldNotSend()
            inFlight = flight
            if case .finish(.unusable) = step {
                return fail(
                    ClientError(.sockets, endpoint: endpoint, "sending to \(endpoint) failed: \(error)"),
                    now: now)
            }
            return follow(step, now: now)
        }
        return []
    }
}

@available(*, unavailable) extension PendingRequests: Sendable {}
