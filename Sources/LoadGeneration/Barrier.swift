import Foundation

/// Lets every thread start its timed part together.
public final class Barrier: @unchecked Sendable {
    // @unchecked: `waiting` and `generation` are only touched under `condition`.
    private let condition = NSCondition()
    private var waiting = 0
    private let parties: Int
    private var generation = 0

    /// A barrier that opens when `parties` threads wait on it.
    public init(parties: Int) { self.parties = parties }

    /// Waits for the others, at most `timeout` seconds; false if they did not all come.
    @discardableResult
    public func wait(timeout: TimeInterval = 30) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let mine = generation
        waiting += 1
        if waiting == parties {
            waiting = 0
            generation += 1
            condition.broadcast()
            return true
        }
        let limit = Date(timeIntervalSinceNow: timeout)
        while generation == mine {
            if !condition.wait(until: limit) { return false }
        }
        return true
    }
}
