import CountriesCore
import ZeroMQ

/// The one poll loop of every subscriber (`watch`, `select`, `on-change`, `events`): it waits on
/// a ``LiveSubscription``'s sockets, an optional ``PendingRequests`` of the caller's own (the
/// toggles of `select`) and the file descriptors the caller adds (stdin, a signal pipe), and
/// hands the caller what happened, in order, until the caller says stop.
///
/// The poll timeout is the soonest of the subscription's timers, the requests' deadline, the
/// caller's own deadline (a frame coalescer, a highlight) and one second. A poll cut short by a
/// signal (`EINTR`) is not an error: the loop reads the clock and goes on (the signal itself
/// arrives on the caller's signal pipe).
public final class SubscriptionLoop<Tag> {
    /// What the subscription reported, with what it left behind: the replica (the state the
    /// notifications produced), its store and the phase after them.
    public struct Update {
        /// What changed, in order.
        public var notifications: [SubscriptionMachine.Notification]
        /// The replica right after each ``SubscriptionMachine/Notification/replaced(seq:)`` and
        /// ``SubscriptionMachine/Notification/applied(_:)``, in order: every state, none skipped
        /// (empty unless the subscription was made with `keepsStates`).
        public var states: [CountriesState]
        /// The replica after them all; nil before the first snapshot.
        public var replica: CountriesState?
        /// The store the replica belongs to.
        public var store: String?
        /// The phase after them.
        public var phase: SubscriptionPhase

        /// The events applied, in seq order.
        public var applied: [Event] {
            notifications.compactMap {
                if case .applied(let event) = $0 { return event }
                return nil
            }
        }
    }

    /// What the loop hands the caller.
    public enum Happening {
        /// The subscription changed something (never an empty list of notifications).
        case update(Update)
        /// Replies to (or failures of) the caller's requests.
        case replies([PendingRequests<Tag>.Outcome])
        /// One of the caller's file descriptors is readable.
        case readable(Int32)
        /// The loop woke up (a timer, or anything above): the caller runs its own timers.
        case tick
    }

    /// The subscription followed.
    public let subscription: LiveSubscription
    private let requests: PendingRequests<Tag>?
    private let fileDescriptors: [Int32]

    /// Creates a loop over `subscription`, the caller's `requests` and `fileDescriptors`.
    public init(
        subscription: LiveSubscription, requests: PendingRequests<Tag>?, fileDescriptors: [Int32] = []
    ) {
        self.subscription = subscription
        self.requests = requests
        self.fileDescriptors = fileDescriptors
    }

    /// Starts the subscription and runs until `handle` returns false.
    ///
    /// - Parameters:
    ///   - deadline: the caller's next deadline, asked before every poll; nil when it has none.
    ///   - handle: gets each happening with the instant it was seen at; false stops the loop.
    public func run(
        deadline: (ContinuousClock.Instant) -> ContinuousClock.Instant? = { _ in nil },
        _ handle: (Happening, ContinuousClock.Instant) throws -> Bool
    ) throws {
        var now = ContinuousClock.now
        guard try deliver(subscription.start(now: now), now: now, to: handle) else { return }
        guard try handle(.tick, now) else { return }
        while true {
            var poller = Poller()
            let registration = subscription.register(in: &poller)
            let requestIndex = requests?.register(in: &poller)
            let descriptorIndexes = fileDescriptors.map { poller.add(fileDescriptor: $0) }

            now = ContinuousClock.now
            let ready = try poller.poll(timeoutMilliseconds: timeout(now: now, caller: deadline(now)))
            now = ContinuousClock.now

            for (index, descriptor) in zip(descriptorIndexes, fileDescriptors) where ready.isReadable(index) {
                guard try handle(.readable(descriptor), now) else { return }
            }
            if let requests {
                var outcomes: [PendingRequests<Tag>.Outcome] = []
                if let requestIndex, ready.isReadable(requestIndex) { outcomes += requests.receive(now: now) }
                outcomes += requests.tick(now: now)
                if !outcomes.isEmpty { guard try handle(.replies(outcomes), now) else { return } }
            }
            guard try deliver(subscription.process(ready, registration, now: now), now: now, to: handle)
            else { return }
            guard try deliver(subscription.tick(now: now), now: now, to: handle) else { return }
            guard try handle(.tick, now) else { return }
        }
    }

    /// The poll timeout in milliseconds: rounded up, so a deadline is never polled short of.
    func timeout(now: ContinuousClock.Instant, caller: ContinuousClock.Instant?) -> Int {
        let deadlines = [now + .seconds(1), subscription.nextDeadline, requests?.nextDeadline, caller]
        let soonest = deadlines.compactMap { $0 }.min() ?? now
        return max(0, Int((soonest - now) / .milliseconds(1)) + 1)
    }

    private func deliver(
        _ output: SubscriptionMachine.Output, now: ContinuousClock.Instant,
        to handle: (Happening, ContinuousClock.Instant) throws -> Bool
    ) throws -> Bool {
        guard !output.notifications.isEmpty else { return true }
        let update = Update(
            notifications: output.notifications, states: output.states, replica: subscription.replica,
            store: subscription.store, phase: subscription.phase)
        return try handle(.update(update), now)
    }
}

extension SubscriptionLoop where Tag == Never {
    /// Creates a loop with no requests of the caller's own.
    public convenience init(subscription: LiveSubscription, fileDescriptors: [Int32] = []) {
        self.init(subscription: subscription, requests: nil, fileDescriptors: fileDescriptors)
    }
}

@available(*, unavailable) extension SubscriptionLoop: Sendable {}
