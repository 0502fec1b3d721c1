import SystemSupport

/// Lets every thread start its timed part together.
public final class Barrier: Sendable {
    /// Threads waiting now, and how many times the barrier has opened.
    private let state = Locked((waiting: 0, openings: 0))
    private let parties: Int

    /// A barrier that opens when `parties` threads wait on it.
    public init(parties: Int) { self.parties = parties }

    /// Waits for the others, at most `timeout` on the monotonic clock (``Locked``'s waits: a
    /// wall clock set meanwhile changes nothing); false if they did not all come.
    @discardableResult
    public func wait(timeout: Duration = .seconds(30)) -> Bool {
        let mine: Int? = state.withLockWakingWaiters { state in
            state.waiting += 1
            guard state.waiting < parties else {
                state.waiting = 0
                state.openings += 1
                return nil
            }
            return state.openings
        }
        guard let mine else { return true }
        return state.wait(for: timeout) { $0.openings != mine }
    }
}
