#if canImport(Glibc)
    @preconcurrency import Glibc
#else
    import Darwin
#endif

/// A value shared between threads, touched only under a lock: the one lock wrapper of the
/// modules. Its lock is a pthread mutex rather than Synchronization's `Mutex`, whose futex calls
/// ThreadSanitizer cannot see, so `scripts/test --sanitize thread` reported races between two
/// `withLock` blocks.
///
/// A thread can also wait for the value to reach a state, with a bound measured on the
/// monotonic clock (``wait(for:until:)``), woken by ``withLockWakingWaiters(_:)``. Not a
/// `DispatchSemaphore` or an `NSCondition`: on Linux their timed waits end by the wall clock (a
/// futex with `FUTEX_CLOCK_REALTIME`, `pthread_cond_timedwait` on its default clock), so a wall
/// clock set forward ends every wait early and one set back an hour holds it an hour.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched under `mutex`, and the pointers never change.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    /// Wraps `value`.
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Timed waits end by this clock, which no one can set.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` on the value under the lock and returns what it returns.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` on the value under the lock, then wakes every thread in
    /// ``wait(for:until:)`` to look at the value again.
    public func withLockWakingWaiters<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&value)
    }

    /// A copy of the value, read under the lock.
    public var current: Value { withLock { $0 } }

    /// Waits until `isReached` holds for the value, or `bound` has passed on the monotonic clock
    /// (a wall clock set meanwhile neither shortens nor lengthens it); whether it holds. The
    /// value is looked at first, and again each time ``withLockWakingWaiters(_:)`` runs. A bound
    /// of zero or less only looks.
    public func wait(for bound: Duration, until isReached: (Value) -> Bool) -> Bool {
        var deadline = Self.monotonicNow(plus: bound)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard bound > .zero else { return isReached(value) }
        // A wake-up for another change, or none at all, waits again for the rest of the bound.
        while !isReached(value), pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT {}
        return isReached(value)
    }

    /// The monotonic clock's reading `duration` from now, saturated rather than wrapped. Added
    /// by hand: the sum as a `Duration` traps in `components` past `Int64.max` seconds.
    private static func monotonicNow(plus duration: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        guard duration > .zero else { return now }
        let (seconds, attoseconds) = duration.components
        var nanoseconds = now.tv_nsec + Int(attoseconds / 1_000_000_000)
        var carry = 0
        if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            carry = 1
        }
        let (sum, overflow) = now.tv_sec.addingReportingOverflow(Int(clamping: seconds) &+ carry)
        guard !overflow, sum >= now.tv_sec else { return timespec(tv_sec: .max, tv_nsec: 0) }
        return timespec(tv_sec: sum, tv_nsec: nanoseconds)
    }
}
