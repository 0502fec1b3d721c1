import Dispatch
import Foundation
import Synchronization
import SystemSupport
import TestSupport
import Testing

/// Waiting on a `Locked` value, as background loops pause: a wait lasts its whole bound unless
/// the value reaches the state waited for, a change made through `withLockWakingWaiters` wakes
/// every waiter at once, and a value already there ends a wait at once.
@Suite(.hangGuard()) struct LockedWaitTests {
    @Test(arguments: [1, 20, 150])
    func aWaitLastsAtLeastItsBound(milliseconds: Int) {
        let flag = Locked(false)
        let bound = Duration.milliseconds(milliseconds)
        for _ in 0..<3 {
            let started = ContinuousClock.now
            let reached = flag.wait(for: bound) { $0 }
            let took = ContinuousClock.now - started
            #expect(!reached)
            #expect(took >= bound, "a wait of \(bound) returned after \(took)")
        }
    }

    @Test func aChangeWakesEveryWaiterAtOnce() {
        let count = Locked(0)
        let waiters = 3
        let reached = Atomic<Int>(0)
        let waiting = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for _ in 0..<waiters {
            done.enter()
            Thread.detachNewThread {
                waiting.signal()
                // Ten minutes: only the change ends it within the test's time.
                if count.wait(for: .seconds(600), until: { $0 >= 2 }) { reached.add(1, ordering: .relaxed) }
                done.leave()
            }
        }
        for _ in 0..<waiters { waiting.wait() }
        // A change short of the state waited for wakes the waiters, who wait on.
        count.withLockWakingWaiters { $0 = 1 }
        let started = ContinuousClock.now
        count.withLockWakingWaiters { $0 = 2 }
        #expect(done.wait(timeout: .now() + .seconds(10 * testSlowdown)) == .success)
        let took = ContinuousClock.now - started
        #expect(reached.load(ordering: .relaxed) == waiters)
        #expect(took < .seconds(5 * testSlowdown), "the waiters took \(took) to wake")
    }

    @Test func aValueAlreadyThereEndsAWaitAtOnce() {
        let flag = Locked(false)
        #expect(!flag.wait(for: .zero) { $0 })
        #expect(!flag.wait(for: .seconds(-1)) { $0 })
        // Changed without waking anyone: a wait still looks before it sleeps.
        flag.withLock { $0 = true }
        let started = ContinuousClock.now
        #expect(flag.wait(for: .seconds(600)) { $0 })
        #expect(flag.wait(for: .zero) { $0 })
        #expect(ContinuousClock.now - started < .seconds(5 * testSlowdown))
    }

    @Test func aBoundTooLongForTheClockWaitsUntilTheChange() {
        let flag = Locked(false)
        let returned = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            // Seconds past what a timespec holds: saturated, not wrapped into the past.
            _ = flag.wait(for: .seconds(Int64.max)) { $0 }
            returned.signal()
        }
        // A wrapped deadline would be in the past and end the wait at once.
        let early = returned.wait(timeout: .now() + .milliseconds(200 * testSlowdown))
        #expect(early == .timedOut, "the wait ended before the change")
        flag.withLockWakingWaiters { $0 = true }
        #expect(returned.wait(timeout: .now() + .seconds(10 * testSlowdown)) == .success)
    }
}
