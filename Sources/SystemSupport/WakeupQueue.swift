/// Items one thread hands another that waits in `poll` or `zmq_poll`: a queue under a lock
/// (``Locked``) and a ``WakeupPipe`` whose read end the waiting loop polls. What the replica's
/// event tail gives the service loop, what `countries web`'s HTTP threads give its subscriber
/// loop, and what a subscriber's receiving thread gives its loop.
///
/// With a ``Budget`` the queue holds at most that many bytes of items: one that would go past
/// it is dropped (never the only one, so an item larger than the budget still passes), and the
/// poster learns how many were. Without one it holds whatever is posted.
public final class WakeupQueue<Item>: @unchecked Sendable {
    // @unchecked: the items are only touched under `state`'s lock, and the pipe is Sendable.

    /// A bound on what the queue holds, in bytes.
    public struct Budget: Sendable {
        /// The most the queued items may weigh together.
        public var maximumBytes: Int
        /// What one item weighs.
        public var bytes: @Sendable (Item) -> Int

        /// A budget of `maximumBytes`, each item weighed by `bytes`.
        public init(maximumBytes: Int, bytes: @escaping @Sendable (Item) -> Int) {
            self.maximumBytes = maximumBytes
            self.bytes = bytes
        }
    }

    private struct State {
        var items: [Item] = []
        var bytes = 0
    }

    private let state = Locked(State())
    private let pipe: WakeupPipe
    private let budget: Budget?

    /// The end to poll for reading: readable when items are waiting in ``drain(maximumCount:)``.
    public var fileDescriptor: Int32 { pipe.fileDescriptor }

    /// Creates the queue and its pipe; with `budget`, the queue is bounded in bytes.
    public init(budget: Budget? = nil) throws(SignalPipeError) {
        pipe = try WakeupPipe()
        self.budget = budget
    }

    /// Queues `newItems` (from any thread) and wakes the loop; returns how many of them were
    /// dropped because the ``Budget`` was spent (always 0 without one).
    @discardableResult
    public func post(_ newItems: [Item]) -> Int {
        guard !newItems.isEmpty else { return 0 }
        let (dropped, wasEmpty) = state.withLock { queued in
            let wasEmpty = queued.items.isEmpty
            guard let budget else {
                queued.items.append(contentsOf: newItems)
                return (0, wasEmpty)
            }
            var dropped = 0
            for item in newItems {
                let bytes = budget.bytes(item)
                if !queued.items.isEmpty && queued.bytes + bytes > budget.maximumBytes {
                    dropped += 1
                    continue
                }
                queued.items.append(item)
                queued.bytes += bytes
            }
            return (dropped, wasEmpty)
        }
        // Items already waiting mean the pipe is awake, or the loop is about to take them all
        // (``drain(maximumCount:)`` empties the pipe before it takes): one write per wake-up.
        if wasEmpty && dropped < newItems.count { pipe.wake() }
        return dropped
    }

    /// Whether an item of `bytes` would be kept by ``post(_:)`` now: always without a budget or
    /// when the queue is empty. Room only grows until the next post, so a lone poster can ask
    /// before it makes an item that would be dropped (and skip the making).
    public func hasRoom(forBytes bytes: Int) -> Bool {
        guard let budget else { return true }
        return state.withLock { $0.items.isEmpty || $0.bytes + bytes <= budget.maximumBytes }
    }

    /// The oldest `maximumCount` items queued, oldest first (on the loop's thread). When more
    /// are left, the pipe stays readable, so the loop comes back for them after its other work.
    public func drain(maximumCount: Int = .max) -> [Item] {
        // Emptied before the items are taken: an item posted after this wakes the pipe again.
        pipe.drain()
        let (taken, left) = state.withLock { queued in
            guard queued.items.count > maximumCount else {
                defer {
                    queued.items.removeAll(keepingCapacity: true)
                    queued.bytes = 0
                }
                return (queued.items, false)
            }
            let taken = Array(queued.items.prefix(maximumCount))
            queued.items.removeFirst(maximumCount)
            if let budget { queued.bytes -= taken.reduce(0) { $0 + budget.bytes($1) } }
            return (taken, true)
        }
        if left { pipe.wake() }
        return taken
    }

    /// How many bytes the queued items weigh by the ``Budget`` (0 without one).
    public var queuedBytes: Int { state.withLock { $0.bytes } }

    /// How many items are queued.
    public var count: Int { state.withLock { $0.items.count } }
}
