/// Items one thread hands another that waits in `poll` or `zmq_poll`: a queue under a lock
/// (``Locked``) and a ``WakeupPipe`` whose read end the waiting loop polls. What the replica's
/// event tail gives the service loop, and what `countries web`'s HTTP threads give its
/// subscriber loop.
public final class WakeupQueue<Item>: @unchecked Sendable {
    // @unchecked: the items are only touched under `items`' lock, and the pipe is Sendable.
    private let items = Locked<[Item]>([])
    private let pipe: WakeupPipe

    /// The end to poll for reading: readable when items are waiting in ``drain()``.
    public var fileDescriptor: Int32 { pipe.fileDescriptor }

    /// Creates the queue and its pipe.
    public init() throws(SignalPipeError) {
        pipe = try WakeupPipe()
    }

    /// Queues `newItems` (from any thread) and wakes the loop.
    public func post(_ newItems: [Item]) {
        guard !newItems.isEmpty else { return }
        items.withLock { $0.append(contentsOf: newItems) }
        pipe.wake()
    }

    /// Everything queued, oldest first (on the loop's thread).
    public func drain() -> [Item] {
        pipe.drain()
        return items.withLock { queued in
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
    }
}
