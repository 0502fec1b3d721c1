import CountriesCore

/// What a ``SubscriptionMachine`` asks of its driver and tells its view.
extension SubscriptionMachine {
    /// A request the driver must send on the command channel.
    public enum Action: Equatable, Sendable {
        /// Send `list`; answer with ``SubscriptionMachine/receiveSnapshot(rows:seq:store:now:)``.
        case requestSnapshot
        /// Send `history` with `since`; answer with
        /// ``SubscriptionMachine/receiveHistory(_:store:more:now:)``.
        case requestHistory(since: UInt64)
    }

    /// What happened to the replica or the phase, for the view.
    public enum Notification: Equatable, Sendable {
        /// The phase changed to this one.
        case phaseChanged(SubscriptionPhase)
        /// One event was applied to the replica, in seq order (from PUB or from history).
        case applied(Event)
        /// The replica was replaced by a snapshot at this seq.
        case replaced(seq: UInt64)
        /// An event was dropped as a protocol violation (a name the service could not have
        /// stored); `reason` says which, with the name escaped for a terminal. Reported once per
        /// seq; the replica catches up as after a gap.
        case rejected(seq: UInt64, reason: String)
    }

    /// What one input produced: requests to send, things to show, and the states they left.
    public struct Output: Equatable, Sendable {
        /// Requests for the driver to send, in order (never more than one at a time).
        public var actions: [Action]
        /// Changes for the view, in the order they happened.
        public var notifications: [Notification]
        /// The replica right after each ``Notification/replaced(seq:)`` and
        /// ``Notification/applied(_:)`` in ``notifications``, in the same order: a consumer that
        /// shows every state (`watch` piped) needs no replica of its own.
        public var states: [CountriesState]

        /// Creates an output.
        public init(actions: [Action] = [], notifications: [Notification] = [], states: [CountriesState] = [])
        {
            self.actions = actions
            self.notifications = notifications
            self.states = states
        }

        /// Outputs are equal when they ask for and report the same things; ``states`` follow
        /// from the notifications.
        public static func == (lhs: Output, rhs: Output) -> Bool {
            lhs.actions == rhs.actions && lhs.notifications == rhs.notifications
        }
    }
}
