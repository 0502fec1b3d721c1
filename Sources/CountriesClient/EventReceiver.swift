import Foundation
import Synchronization
import SystemSupport
import ZeroMQ

/// A subscription's SUB socket, read on a thread of its own into a queue bounded in bytes: what
/// a publisher sends faster than the subscriber decodes it costs at most ``bufferBytes``.
///
/// libzmq counts a SUB's queue in messages (``LiveSubscription`` keeps up to 100,000, each up to
/// the largest event, about 16 MB), so a publisher that sends large events faster than they are
/// decoded (or a hostile one: its events only have to be legal in shape) grew a subscriber by as
/// much as it liked. This thread does nothing but move whole messages out of libzmq, which it does
/// far faster than they arrive, so libzmq's queue stays short, and the messages wait here, weighed
/// in bytes. A message past the budget is dropped: the subscription sees the gap in seqs and
/// catches up from `history` or a `list`, as it does when libzmq drops one (docs/RELIABILITY.md,
/// section 2).
///
/// The socket is made, used and closed on the thread; the loop polls ``fileDescriptor`` and
/// takes the messages with ``receive(maximumCount:)``. After ``reconnectAfter`` with nothing
/// received (the service heartbeats), it connects its endpoints anew (``SilenceReconnection``):
/// libzmq never reconnects an endpoint that sent it a frame past the largest event.
final class EventReceiver {
    /// Counted for each frame besides its bytes (a `Data`'s storage and its place in an array),
    /// so that a flood of tiny messages is bounded too.
    static let frameOverheadBytes = 64

    /// What a message of `frames` frames holding `bytes` bytes weighs against the budget.
    static func weight(bytes: Int, frames: Int) -> Int {
        bytes + frames * frameOverheadBytes
    }

    /// What a message weighs against the budget.
    static func weight(of frames: [Data]) -> Int {
        weight(bytes: frames.reduce(0) { $0 + $1.count }, frames: frames.count)
    }

    /// The most the waiting messages weigh.
    let bufferBytes: Int
    private let queue: WakeupQueue<[Data]>
    private let stopping: WakeupPipe
    private let worker = WorkerThread(name: "events in")
    private let droppedCount: Dropped

    /// Readable while messages wait in ``receive(maximumCount:)``.
    var fileDescriptor: Int32 { queue.fileDescriptor }

    /// How many messages were dropped because the budget was spent.
    var dropped: Int { droppedCount.value.load(ordering: .relaxed) }

    /// How many messages wait for ``receive(maximumCount:)``.
    var waitingCount: Int { queue.count }

    /// What they weigh against the budget (``weight(of:)``).
    var waitingBytes: Int { queue.queuedBytes }

    /// Subscribes to every topic at `endpoints` (one SUB connected to each) and starts reading.
    /// `configure` sets the socket's options on the reading thread, before it connects.
    init(
        context: Context, endpoints: [String], bufferBytes: Int, reconnectAfter: Duration = .seconds(5),
        configure: @escaping @Sendable (Socket) throws(ZMQError) -> Void
    ) throws(ClientError) {
        self.bufferBytes = bufferBytes
        let description = endpoints.joined(separator: ",")
        do {
            queue = try WakeupQueue(budget: .init(maximumBytes: bufferBytes, bytes: Self.weight(of:)))
            stopping = try WakeupPipe()
        } catch {
            throw ClientError(.sockets, endpoint: description, "cannot make a wake-up pipe: \(error)")
        }
        let dropped = Dropped()
        droppedCount = dropped
        let setupFailure = Locked<ZMQError?>(nil)
        let ready = DispatchSemaphore(value: 0)
        worker.start { [queue, stopping, worker] in
            let subscriber: Socket
            do throws(ZMQError) {
                subscriber = try context.makeSocket(.sub)
                try subscriber.setOption(.linger, 0)
                try configure(subscriber)
                try subscriber.subscribe("")
                // One SUB on every replica: the machine takes each seq once
                // (``SubscriptionMachine/sources``).
                for endpoint in endpoints { try subscriber.connect(endpoint) }
            } catch {
                setupFailure.withLock { $0 = error }
                ready.signal()
                return
            }
            ready.signal()
            Self.read(
                subscriber, into: queue, counting: dropped, until: stopping, worker: worker,
                reconnecting: (endpoints, SilenceReconnection(after: reconnectAfter)))
            subscriber.close()
        }
        ready.wait()
        if let error = setupFailure.current {
            worker.stop()
            throw ClientError(.sockets, endpoint: description, "cannot subscribe to \(description): \(error)")
        }
    }

    deinit {
        worker.stop(wake: stopping.wake)
    }

    /// The oldest `maximumCount` messages waiting, oldest first; ``fileDescriptor`` stays
    /// readable while more wait.
    func receive(maximumCount: Int) -> [[Data]] {
        queue.drain(maximumCount: maximumCount)
    }

    /// The thread's loop: every message libzmq has, into the queue, until asked to stop (or the
    /// context is shut down).
    private static func read(
        _ subscriber: Socket, into queue: WakeupQueue<[Data]>, counting dropped: Dropped,
        until stopping: WakeupPipe, worker: WorkerThread,
        reconnecting: (endpoints: [String], schedule: SilenceReconnection)
    ) {
        var schedule = reconnecting.schedule
        var lastHeard = ContinuousClock.now
        var poller = Poller()
        let events = poller.add(subscriber)
        _ = poller.add(fileDescriptor: stopping.fileDescriptor)
        while !worker.isStopping {
            let wait = schedule.deadline(lastHeard: lastHeard) - .now
            guard let ready = try? poller.poll(timeoutMilliseconds: max(0, wait.millisecondsRoundedUp)) else {
                return
            }
            guard ready.isReadable(events) else {
                if schedule.isDue(lastHeard: lastHeard, now: .now) {
                    subscriber.connectAnew(reconnecting.endpoints)
                }
                continue
            }
            // One message at a time: a batch gathered here would be memory outside the budget.
            // Held in libzmq's buffers until it is known to fit: one that does not is dropped
            // without being copied, so that while the budget is spent this thread empties
            // libzmq's queue at the speed of a receive, not of a copy (a sanitized build's copy
            // is ten times slower, and fell behind a fast publisher).
            while !worker.isStopping, let message = try? subscriber.receiveHeld(dontWait: true) {
                lastHeard = .now
                guard queue.hasRoom(forBytes: weight(bytes: message.byteCount, frames: message.count)) else {
                    dropped.value.add(1, ordering: .relaxed)
                    continue
                }
                let frames = message.withBuffers { buffers in buffers.map { Data($0) } }
                queue.post([frames])
            }
        }
    }

    /// The count of dropped messages, shared with the thread.
    private final class Dropped: Sendable {
        let value = Atomic<Int>(0)
    }
}

@available(*, unavailable) extension EventReceiver: Sendable {}
