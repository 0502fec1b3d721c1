import CountriesCore
import Foundation
import ZeroMQ

/// Requests sent without blocking, for event loops that also wait on other things (a SUB
/// socket, stdin, signals): the Lazy Pirate pattern of ``CommandClient``, turned inside out.
///
/// One request is in flight at a time on one REQ socket; the others wait their turn in
/// order. A request that gets no reply within `timeout` is resent on a new socket with the
/// same bytes (same id), up to `tries` times, then reported as failed. With several endpoints
/// (replicas of one service) each retry goes to the next one, as ``CommandClient`` does, and the
/// one that answered is tried first next time.
public final class PendingRequests<Tag> {
    /// The outcome of one request.
    public enum Outcome {
        /// The service replied (a success or a refusal).
        case replied(Tag, Reply)
        /// No reply after every try, or the reply was not protocol JSON.
        case failed(Tag, ClientError)
    }

    /// The service's command endpoints, in the order given.
    public let endpoints: [String]
    private let timeout: Duration
    private let tries: Int
    /// One lazy socket per endpoint; only the one in use is open.
    private let sockets: [LazyRequestSocket]
    /// The endpoint in use: the last one that answered, or the one a retry moved to.
    private var current = 0
    private var queue: [(tag: Tag, body: Data)] = []
    private var inFlight: (tag: Tag, body: Data, triesLeft: Int, deadline: ContinuousClock.Instant)?

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
        sockets = endpoints.map { LazyRequestSocket(context: context, endpoint: $0, security: security) }
    }

    /// The endpoint in use.
    public var endpoint: String { endpoints[current] }

    private var socket: LazyRequestSocket { sockets[current] }

    /// Whether nothing is in flight or queued.
    public var isIdle: Bool { inFlight == nil && queue.isEmpty }

    /// Queues a request; it is sent as soon as the ones before it are answered.
    public func send(_ request: Request, tag: Tag, now: ContinuousClock.Instant) -> [Outcome] {
        queue.append((tag, request.encoded()))
        return startNext(now: now)
    }

    /// Adds the socket to wait on, if a request is in flight; returns its poller index.
    public func register(in poller: inout Poller) -> Int? {
        guard inFlight != nil, let socket = socket.current else { return nil }
        return poller.add(socket)
    }

    /// When ``tick(now:)`` must run next (the in-flight request's deadline).
    public var nextDeadline: ContinuousClock.Instant? { inFlight?.deadline }

    /// Reads a reply if the socket is readable; call after polling.
    public func receive(now: ContinuousClock.Instant) -> [Outcome] {
        guard let flight = inFlight, let socket = socket.current else { return [] }
        let frames: [Data]?
        do {
            frames = try socket.receive(dontWait: true)
        } catch {
            return fail(
                ClientError(.sockets, endpoint: endpoint, "receiving from \(endpoint) failed: \(error)"),
                now: now)
        }
        guard let frames else { return [] }
        inFlight = nil
        var outcomes: [Outcome]
        let decoded = try? Reply.decode(frames.last ?? Data())
        if let reply = decoded, reply.failure?.code == .unavailable, flight.triesLeft > 0 {
            // "Retry with the same id": on the next replica, as a timeout would.
            moveOn()
            return transmit(tag: flight.tag, body: flight.body, triesLeft: flight.triesLeft, now: now)
        }
        if let reply = decoded {
            outcomes = [.replied(flight.tag, reply)]
        } else {
            outcomes = [
                .failed(
                    flight.tag,
                    ClientError(
                        .badReply, endpoint: endpoint, "the reply from \(endpoint) is not protocol JSON"))
            ]
        }
        outcomes += startNext(now: now)
        return outcomes
    }

    /// Retries or fails a request whose deadline has passed.
    public func tick(now: ContinuousClock.Instant) -> [Outcome] {
        guard let flight = inFlight, now >= flight.deadline else { return [] }
        discardSocket()
        moveOn()
        if flight.triesLeft > 0 {
            inFlight = nil
            return transmit(tag: flight.tag, body: flight.body, triesLeft: flight.triesLeft, now: now)
        }
        let failure = ClientError(
            .noReply, endpoint: endpoints.joined(separator: ","),
            "no reply from \(endpoints.joined(separator: ", ")) after \(tries) tries")
        return fail(failure, now: now)
    }

    private func fail(_ error: ClientError, now: ContinuousClock.Instant) -> [Outcome] {
        guard let flight = inFlight else { return [] }
        inFlight = nil
        discardSocket()
        return [.failed(flight.tag, error)] + startNext(now: now)
    }

    private func startNext(now: ContinuousClock.Instant) -> [Outcome] {
        guard inFlight == nil, !queue.isEmpty else { return [] }
        let next = queue.removeFirst()
        return transmit(tag: next.tag, body: next.body, triesLeft: tries, now: now)
    }

    private func transmit(tag: Tag, body: Data, triesLeft: Int, now: ContinuousClock.Instant) -> [Outcome] {
        inFlight = (tag, body, triesLeft - 1, now + timeout)
        do {
            let socket = try self.socket.connected()
            // A fresh REQ socket queues the message even before it connects; false is only a
            // full pipe, which the deadline then handles like a lost reply.
            _ = try socket.send([body], dontWait: true)
        } catch {
            return fail(
                ClientError(.sockets, endpoint: endpoint, "sending to \(endpoint) failed: \(error)"), now: now
            )
        }
        return []
    }

    private func discardSocket() {
        socket.discard()
    }

    /// The next try goes to the next endpoint (a no-op with one).
    private func moveOn() {
        socket.discard()
        current = (current + 1) % endpoints.count
    }
}

@available(*, unavailable) extension PendingRequests: Sendable {}
