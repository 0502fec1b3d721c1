import Foundation
import SystemSupport

/// Runs `count` threads, `body(index)` on each (real threads: each load client owns its
/// sockets, which cannot cross threads), and waits for all of them.
public func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    // Unbounded: the bound saturates at what the clock can hold.
    _ = startThreads(count, body).wait(for: .seconds(Int64.max)) { $0 == 0 }
}

/// `runThreads`, waiting at most `timeout` on the monotonic clock; throws when they did not
/// all finish by then (they go on running: a test that gives up on them fails).
public func runThreads(_ count: Int, within timeout: Duration, _ body: @escaping @Sendable (Int) -> Void)
    throws(LoadGenerationError)
{
    guard startThreads(count, body).wait(for: timeout, until: { $0 == 0 }) else {
        throw LoadGenerationError("\(count) client threads did not finish within \(timeout)")
    }
}

/// Starts the threads; the count they share is how many have not finished yet.
private func startThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> Locked<Int> {
    let running = Locked(count)
    for index in 0..<count {
        let thread = Thread {
            body(index)
            running.withLockWakingWaiters { $0 -= 1 }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    return running
}
