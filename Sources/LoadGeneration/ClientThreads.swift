import Foundation

/// Runs `count` threads, `body(index)` on each (real threads: each load client owns its
/// sockets, which cannot cross threads), and waits for all of them.
public func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    _ = startThreads(count, body).wait(timeout: .distantFuture)
}

/// `runThreads`, waiting at most `timeout`; throws when they did not all finish by then (they
/// go on running: a test that gives up on them fails).
public func runThreads(_ count: Int, within timeout: Duration, _ body: @escaping @Sendable (Int) -> Void)
    throws(LoadGenerationError)
{
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18
    guard startThreads(count, body).wait(timeout: .now() + seconds) == .success else {
        throw LoadGenerationError("\(count) client threads did not finish within \(timeout)")
    }
}

/// Starts the threads; the group is left when each has finished.
private func startThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    return group
}
