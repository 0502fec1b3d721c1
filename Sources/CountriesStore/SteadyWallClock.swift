#if canImport(Glibc)
    @preconcurrency import Glibc
#else
    import Darwin
#endif

/// The time a store this process owns alone (SQLite, memory) stamps request ids with and ages
/// them by: the wall clock as the process first read it, advanced by the boot-time clock since.
///
/// The wall clock itself can be set while the service runs (NTP stepping it, a virtual machine
/// resumed, an operator): set forward ten minutes, every id but the newest 10,000 would read as
/// older than ``CountriesCore/Limits/requestIDMinimumAge`` at once, and a client retrying a
/// change within its seconds of retries could have it applied twice (docs/PROTOCOL.md, "Retries
/// are safe"; docs/RELIABILITY.md, section 15). Set back, ids would only be kept longer, which
/// the maximums bound. `CLOCK_BOOTTIME` cannot be set, and counts a suspended machine's time as
/// the wall clock does. A new process reads the wall clock again, so stamps written to a file stay
/// comparable across restarts. A replica stamps a generation with its wall clock, which other
/// replicas read, and judges its age with this clock's help
/// (``RequestIDWindow/judgedNow(wallMilliseconds:startedMilliseconds:knownForMilliseconds:)``).
///
/// In integer nanoseconds rather than `ContinuousClock`'s instants: a `Duration`'s components
/// are a 128-bit division, which made each reading five times the wall clock's (every commit
/// reads it).
public struct SteadyWallClock: Sendable {
    private let startMilliseconds: Int64
    private let startNanoseconds: Int64

    /// A clock that reads `wallMilliseconds` (since 1970) when the boot-time clock reads
    /// `bootNanoseconds`.
    public init(wallMilliseconds: Int64, atBootNanoseconds bootNanoseconds: Int64) {
        startMilliseconds = wallMilliseconds
        startNanoseconds = bootNanoseconds
    }

    /// Its reading when the boot-time clock reads `bootNanoseconds`, in milliseconds since 1970;
    /// parts of a millisecond are dropped, never rounded up.
    public func milliseconds(atBootNanoseconds bootNanoseconds: Int64) -> Int64 {
        let elapsed = bootNanoseconds - startNanoseconds
        return startMilliseconds + elapsed / 1_000_000 - (elapsed % 1_000_000 < 0 ? 1 : 0)
    }

    /// Its reading now.
    public var nowMilliseconds: Int64 { milliseconds(atBootNanoseconds: Self.bootNanoseconds()) }

    /// The boot-time clock's reading: nanoseconds since the machine started, suspensions included.
    public static func bootNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// This process's: the wall clock as first read, when a store first asks.
    public static let process = SteadyWallClock(
        wallMilliseconds: RequestIDWindow.nowMilliseconds, atBootNanoseconds: bootNanoseconds())
}
