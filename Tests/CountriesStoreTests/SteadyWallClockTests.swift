import CountriesStore
import Testing

/// The clock single-node stores age request ids by: the wall clock once, then only the
/// boot-time clock's elapsed time, so a wall clock set meanwhile does not age or rejuvenate
/// an id (docs/PROTOCOL.md, "Retries are safe").
@Suite struct SteadyWallClockTests {
    private let millisecond: Int64 = 1_000_000

    @Test func itReadsTheWallClockOnceAndThenCountsElapsedTime() {
        let start: Int64 = 5_000 * millisecond
        let clock = SteadyWallClock(wallMilliseconds: 1_700_000_000_000, atBootNanoseconds: start)
        #expect(clock.milliseconds(atBootNanoseconds: start) == 1_700_000_000_000)
        #expect(clock.milliseconds(atBootNanoseconds: start + millisecond) == 1_700_000_000_001)
        #expect(clock.milliseconds(atBootNanoseconds: start + 600_000 * millisecond) == 1_700_000_600_000)
        // Parts of a millisecond are dropped: an id is never aged early.
        #expect(clock.milliseconds(atBootNanoseconds: start + 2_999_999) == 1_700_000_000_002)
        #expect(
            clock.milliseconds(atBootNanoseconds: start + 86_400_000 * 365 * millisecond)
                == 1_700_000_000_000 + 31_536_000_000)
    }

    @Test func anInstantBeforeItsStartReadsEarlierAndIsNotRoundedUp() {
        let clock = SteadyWallClock(wallMilliseconds: 10_000, atBootNanoseconds: 9_000 * millisecond)
        #expect(clock.milliseconds(atBootNanoseconds: 7_500 * millisecond) == 8_500)
        #expect(clock.milliseconds(atBootNanoseconds: 9_000 * millisecond - 1) == 9_999)
    }

    @Test func theProcessClockStartsAtTheWallClockAndAdvancesWithTheBootTimeClock() {
        let wall = RequestIDWindow.nowMilliseconds
        let first = SteadyWallClock.process.nowMilliseconds
        // Read within the same seconds as the wall clock, whatever the machine's load.
        #expect(abs(first - wall) < 60_000)
        let boot = SteadyWallClock.bootNanoseconds()
        let now = SteadyWallClock.process.milliseconds(atBootNanoseconds: boot)
        let later = SteadyWallClock.process.milliseconds(atBootNanoseconds: boot + 5_000 * millisecond)
        #expect(later - now == 5_000)
        #expect(SteadyWallClock.bootNanoseconds() >= boot)
    }
}
