import Foundation

/// A value shared between threads, touched only under a lock: the one lock wrapper of the
/// modules. It is an `NSLock` (a pthread mutex) rather than Synchronization's `Mutex`, whose
/// futex calls ThreadSanitizer cannot see, so `scripts/test --sanitize thread` reported races
/// between two `withLock` blocks.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value

    /// Wraps `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` on the value under the lock and returns what it returns.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value, read under the lock.
    public var current: Value { withLock { $0 } }
}
