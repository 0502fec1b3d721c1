import CountriesCore
import Foundation
import ZeroMQ

/// Keeps a local copy of the list in sync with the service: the driver of
/// ``SubscriptionMachine`` over a SUB socket and non-blocking `list`/`history` requests.
///
/// It never blocks and owns no loop: the caller adds its sockets to a `Poller` beside its own
/// descriptors (stdin, a signal pipe), calls ``process(_:_:now:)`` after each poll and
/// ``tick(now:)`` at ``nextDeadline``, and renders the notifications it returns.
public final class LiveSubscription {
    /// Where the subscription connects: one service, or replicas of one service (each list
    /// in the order to try; docs/PROTOCOL.md, "Replicas").
    public struct Endpoints: Sendable, Equatable {
        /// The command endpoints (`list` and `history`), tried in turn.
        public var commandEndpoints: [String]
        /// The event endpoints (a service's PUB, or a relay), all subscribed to at once.
        public var eventEndpoints: [String]

        /// Creates endpoints for one service.
        public init(command: String, events: String) {
            self.init(commands: [command], events: [events])
        }

        /// Creates endpoints for replicas of one service (each list non-empty).
        public init(commands: [String], events: [String]) {
            commandEndpoints = commands
            eventEndpoints = events
        }

        /// The command endpoints as `--command` takes them (comma-separated).
        public var command: String { commandEndpoints.joined(separator: ",") }
        /// The event endpoints as `--events` takes them (comma-separated).
        public var events: String { eventEndpoints.joined(separator: ",") }
    }

    /// The poller indexes of this subscription's request socket and events' queue, for
    /// ``process(_:_:now:)``.
    public struct Registration {
        fileprivate var events: Int
        fileprivate var requests: Int?
    }

    /// What the events waiting to be processed may weigh by default: twice the largest event (a
    /// reset of the longest list, 16 MB), so one of them and what follows it fit.
    public static let defaultEventBufferBytes = 32 << 20

    /// What the states of one update may weigh by default (``SubscriptionMachine/Output/states``,
    /// ``CountriesCore/CountriesState/copyBytes``): a piped `watch` keeps the list after each
    /// event, and 10,000 events drained at once on a list of 10,000 rows took 2.4 GB.
    public static let defaultStateBytesPerUpdate = 64 << 20

    /// The endpoints in use.
    public let endpoints: Endpoints
    private let receiver: EventReceiver
    private let requests: PendingRequests<SubscriptionMachine.Action>
    private var machine: SubscriptionMachine
    /// Most bytes of states one update carries; past them the rest of the events wait for the
    /// next update, in the receiver's queue (bounded in bytes itself).
    private let stateBytesPerUpdate: Int

    /// The replica, nil before the first snapshot.
    public var replica: CountriesState? { machine.replica }
    /// Whether the replica is live, stale or not there yet.
    public var phase: SubscriptionPhase { machine.phase }
    /// How many events (heartbeats included) were dropped because they came faster than this
    /// subscription took them: more than `eventBufferBytes` waited. Each drop is a gap the
    /// subscription catches up from; a count that grows says the subscriber, not the service
    /// or the network, lost them.
    public var droppedEvents: Int { receiver.dropped }
    /// The identity of the store the replica belongs to (nil before the first snapshot, or from
    /// a service older than v1.1).
    public var store: String? { machine.store }

    /// Connects the SUB socket (subscribed to every topic, heartbeats included) and prepares
    /// the request channel; call ``start(now:)`` next.
    ///
    /// With `keepsStates`, ``SubscriptionLoop`` hands over the state after every change
    /// (``SubscriptionLoop/Update/states``). Off, the machine makes none
    /// (``SubscriptionMachine/keepsStates``): each kept state costs a copy of the list when the
    /// next event of the same page is applied (measured: a history page of 500 events on a
    /// 10,000-row list, 87 ms with and 1.5 ms without, debug build).
    ///
    /// Events wait to be processed in at most `eventBufferBytes` (``defaultEventBufferBytes``);
    /// past it they are dropped and the subscription catches up (docs/RELIABILITY.md, section 2).
    public init(
        context: Context, endpoints: Endpoints, heartbeatInterval: Duration = Defaults.heartbeatInterval,
        requestTimeout: Duration = Defaults.requestTimeout, security: ClientSecurity? = nil,
        eventsSecurity: ClientSecurity? = nil, keepsStates: Bool = false,
        eventBufferBytes: Int = LiveSubscription.defaultEventBufferBytes,
        stateBytesPerUpdate: Int = LiveSubscription.defaultStateBytesPerUpdate
    ) throws(ClientError) {
        self.endpoints = endpoints
        self.stateBytesPerUpdate = stateBytesPerUpdate
        machine = SubscriptionMachine(
            heartbeatInterval: heartbeatInterval, sources: endpoints.eventEndpoints.count)
        machine.keepsStates = keepsStates
        // One try per replica: the machine retries with backoff itself.
        requests = PendingRequests(
            context: context, endpoints: endpoints.commandEndpoints, timeout: requestTimeout, tries: 1,
            security: security)
        // A relay has its own key; without one given, the events come from the service.
        let eventKeys = eventsSecurity ?? security
        // Five heartbeats without a message: the endpoints are connected anew, in case libzmq
        // gave one up after a frame past the largest event.
        receiver = try EventReceiver(
            context: context, endpoints: endpoints.eventEndpoints, bufferBytes: eventBufferBytes,
            reconnectAfter: max(heartbeatInterval * 5, .seconds(2))
        ) { subscriber throws(ZMQError) in
            // A reset of the largest list is the largest event (``EventShape``, about 16 MB):
            // libzmq drops a connection that sends a larger frame before anything is kept (and
            // does not reconnect it: the receiver does, after a silence).
            try subscriber.setOption(.maxMessageSize, Int64(EventShape.maximumBodyBytes))
            // The receiver's thread keeps this queue short; the bound that counts is its own,
            // in bytes (``EventReceiver``). Past either, we lose events, notice the gap, and
            // catch up from history instead of holding memory without limit.
            try subscriber.setOption(.receiveHighWaterMark, 100_000)
            try subscriber.setOption(.heartbeatInterval, 2_000)
            try subscriber.setOption(.heartbeatTimeout, 6_000)
            if let eventKeys { try eventKeys.apply(to: subscriber) }
        }
    }

    /// Asks for the first snapshot (the SUB socket is already subscribed, so nothing falls
    /// between the two). What it returns (here and from ``process(_:_:now:)`` and
    /// ``tick(now:)``) carries the notifications and the states they left
    /// (``SubscriptionMachine/Output``); the requests they asked for are already sent.
    public func start(now: ContinuousClock.Instant) -> SubscriptionMachine.Output {
        perform(machine.start(now: now), now: now)
    }

    /// Adds this subscription's request socket and its events' queue (``EventReceiver``) to
    /// `poller`.
    public func register(in poller: inout Poller) -> Registration {
        Registration(
            events: poller.add(fileDescriptor: receiver.fileDescriptor),
            requests: requests.register(in: &poller))
    }

    /// Reads whatever is ready after a poll and returns what changed.
    public func process(
        _ ready: PollResult, _ registration: Registration, now: ContinuousClock.Instant
    ) -> SubscriptionMachine.Output {
        var out = SubscriptionMachine.Output()
        if let index = registration.requests, ready.isReadable(index) {
            out.append(handle(requests.receive(now: now), now: now))
        }
        if ready.isReadable(registration.events) {
            out.append(drainEvents(now: now))
        }
        return out
    }

    /// Runs timers (heartbeat watchdog, request timeouts and retries).
    public func tick(now: ContinuousClock.Instant) -> SubscriptionMachine.Output {
        var out = handle(requests.tick(now: now), now: now)
        out.append(perform(machine.tick(now: now), now: now))
        return out
    }

    /// When ``tick(now:)`` must run next.
    public var nextDeadline: ContinuousClock.Instant? {
        [machine.nextDeadline(), requests.nextDeadline].compactMap { $0 }.min()
    }

    private func drainEvents(now: ContinuousClock.Instant) -> SubscriptionMachine.Output {
        var out = SubscriptionMachine.Output()
        var stateBytes = 0
        var taken = 0
        // Bounded in count so a flood of events cannot starve the keyboard and the screen, and
        // in the bytes of the states kept; what is left waits for the next update.
        while taken < 10_000, stateBytes < stateBytesPerUpdate {
            let messages = receiver.receive(maximumCount: 8)
            if messages.isEmpty { break }
            taken += messages.count
            for frames in messages {
                // Sized before it is parsed: a parsed body takes up to 15 times its bytes (a 60 MB
                // heartbeat of `{}`s made 1 GB), and no heartbeat is over 100 bytes.
                guard frames.count == 2,
                    let topic = Topic(rawValue: String(decoding: frames[0], as: UTF8.self)),
                    frames[1].count <= EventShape.maximumBodyBytes(topic)
                else { continue }
                let kept = out.states.count
                if topic == .heartbeat {
                    if let heartbeat = try? Heartbeat.decode(frames[1]) {
                        out.append(perform(machine.receive(heartbeat, now: now), now: now))
                    }
                } else if let event = try? Event.decode(frames[1]) {
                    out.append(perform(machine.receive(event, now: now), now: now))
                }
                stateBytes += out.states[kept...].reduce(0) { $0 + $1.copyBytes }
            }
        }
        return out
    }

    /// Sends the requests `output` asks for; returns its notifications and states with those
    /// of any request that failed at once.
    private func perform(
        _ output: SubscriptionMachine.Output, now: ContinuousClock.Instant
    ) -> SubscriptionMachine.Output {
        // The machine keeps no states when this does not (`machine.keepsStates`).
        var out = SubscriptionMachine.Output(notifications: output.notifications, states: output.states)
        for action in output.actions {
            let command: Command
            switch action {
            case .requestSnapshot: command = .query(.list)
            case .requestHistory(let since): command = .history(since: since)
            }
            out.append(handle(requests.send(Request(command: command), tag: action, now: now), now: now))
        }
        return out
    }

    private func handle(
        _ outcomes: [PendingRequests<SubscriptionMachine.Action>.Outcome], now: ContinuousClock.Instant
    ) -> SubscriptionMachine.Output {
        var out = SubscriptionMachine.Output()
        for outcome in outcomes {
            switch outcome {
            case .replied(let action, let reply):
                out.append(perform(answer(action, reply, now: now), now: now))
            case .failed(let action, _):
                out.append(perform(machine.requestFailed(action, truncated: false, now: now), now: now))
            }
        }
        return out
    }

    private func answer(
        _ action: SubscriptionMachine.Action, _ reply: Reply, now: ContinuousClock.Instant
    ) -> SubscriptionMachine.Output {
        switch action {
        case .requestSnapshot:
            guard reply.ok, let rows = reply.countries, let seq = reply.seq else {
                return machine.requestFailed(action, truncated: false, now: now)
            }
            return machine.receiveSnapshot(rows: rows, seq: seq, store: reply.store, now: now)
        case .requestHistory:
            guard reply.ok, let events = reply.events else {
                // Any refusal of history (truncated, too large) is answered the same way: a
                // snapshot.
                return machine.requestFailed(action, truncated: true, now: now)
            }
            return machine.receiveHistory(events, store: reply.store, more: reply.more ?? false, now: now)
        }
    }
}

@available(*, unavailable) extension LiveSubscription: Sendable {}

extension SubscriptionMachine.Output {
    /// Adds what `other` reported after what this one did (its actions are already performed).
    fileprivate mutating func append(_ other: SubscriptionMachine.Output) {
        notifications += other.notifications
        states += other.states
    }
}
