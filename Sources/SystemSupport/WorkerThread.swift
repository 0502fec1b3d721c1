import Dispatch
import Foundation
import Synchronization

/// A named thread that runs one loop until it is asked to stop: how every background loop of the
/// service starts, pauses and ends (etcd's quorum probe, event tail, writer election and
/// snapshot writer), so none of them hand-rolls its flag, its semaphore or its sleeps.
///
/// The loop asks ``isStopping`` between steps and waits with ``pause(for:)``, which returns as
/// soon as ``stop(wake:)`` is called; a loop that blocks on something else is roused by the
/// `wake` it passes to ``stop(wake:)``.
public final class WorkerThread: Sendable {
    /// The thread's name, as `ps -T`, `top -H` and a debugger show it: at most
    /// ``maximumNameBytes`` (Linux keeps no more), cut at a character.
    public let name: String
    /// How much of a thread's name Linux keeps, in bytes.
    public static let maximumNameBytes = 15
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// What a pause waits on: set by ``stop(wake:)`` with `stopping`, which stays for
    /// ``isStopping``, asked by some loops at every message: a load, not a lock.
    private let stopRequested = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    /// A worker whose thread will be called `name` (cut to ``maximumNameBytes``); ``start(_:)``
    /// starts it.
    public init(name: String) {
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= Self.maximumNameBytes else { break }
            kept.append(character)
        }
        self.name = kept
    }

    /// Whether ``stop(wake:)`` was called: the loop returns at its next look.
    public var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// Runs `loop` on a new thread. Only the first call starts one.
    public func start(_ loop: @escaping @Sendable () -> Void) {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
            return
        }
        let thread = Thread { [name, finished] in
            Self.nameCurrentThread(name)
            loop()
            finished.signal()
        }
        thread.start()
    }

    /// Asks the loop to stop, calls `wake` (for a loop blocked on something of its own), and
    /// waits until the loop has returned; at once when it was never started. Safe to call again.
    public func stop(wake: () -> Void = {}) {
        stopping.store(true, ordering: .relaxed)
        stopRequested.withLockWakingWaiters { $0 = true }
        wake()
        guard started.load(ordering: .relaxed) else { return }
        finished.wait()
        // For a later call: the loop is over, so it waits for nothing.
        finished.signal()
    }

    /// Waits `duration` by the monotonic clock (a wall clock set meanwhile neither shortens nor
    /// lengthens it), or less when ``stop(wake:)`` is called meanwhile; whether the loop may go
    /// on (false: it is stopping).
    @discardableResult
    public func pause(for duration: Duration) -> Bool {
        guard !isStopping else { return false }
        if duration > .zero { _ = stopRequested.wait(for: duration) { $0 } }
        return !isStopping
    }

    /// Gives the calling thread its name where the system keeps it. Not Foundation's
    /// `Thread.name`: set before the start it never reaches the system, and set from inside
    /// it did not always either (under ThreadSanitizer the thread kept its creator's name).
    private static func nameCurrentThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // A name the system refuses only leaves the thread unnamed.
        _ = FileDescriptorOutput.write(name, to: descriptor)
    }
}
