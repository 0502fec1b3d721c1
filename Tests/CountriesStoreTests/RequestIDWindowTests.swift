import Foundation
import Testing

@testable import CountriesStore

/// When a request-id generation closes: only once it is both old enough and holds enough ids,
/// or once it is full; and its value round-trips through etcd's bytes.
@Suite struct RequestIDWindowTests {
    private let window = RequestIDWindow(
        minimumAge: .seconds(600), minimumCount: 100, maximumCount: 1_000, maximumBytes: 10_000)
    private let start: Int64 = 1_000_000

    private func generation(count: Int, bytes: Int = 0) -> RequestIDWindow.Generation {
        RequestIDWindow.Generation(number: 3, startedMilliseconds: start, count: count, bytes: bytes)
    }

    @Test func itClosesOnlyOnceOldEnoughAndFullEnough() {
        let young = window.after(
            generation(count: 500), adding: 2, bytes: 10, nowMilliseconds: start + 599_999)
        #expect(!young.opened && young.generation.count == 502 && young.generation.bytes == 10)
        let few = window.after(
            generation(count: 99), adding: 1, bytes: 10, nowMilliseconds: start + 3_600_000)
        #expect(!few.opened && few.generation.count == 100)
        let due = window.after(generation(count: 100), adding: 4, bytes: 40, nowMilliseconds: start + 600_000)
        #expect(due.opened)
        #expect(
            due.generation
                == RequestIDWindow.Generation(
                    number: 4, startedMilliseconds: start + 600_000, count: 4, bytes: 40))
    }

    @Test func aNewGenerationStartsAtItsFirstChangeAfterTheOneBefore() {
        var current = generation(count: 100)
        current.firstSeq = 40
        current.previousFirstSeq = 7
        let next = window.after(current, adding: 1, bytes: 5, nowMilliseconds: start + 600_000, atSeq: 900)
        #expect(next.opened && next.generation.firstSeq == 900 && next.generation.previousFirstSeq == 40)
        let grown = window.after(current, adding: 1, bytes: 5, nowMilliseconds: start, atSeq: 900)
        #expect(!grown.opened && grown.generation.firstSeq == 40 && grown.generation.previousFirstSeq == 7)
    }

    @Test func aFullGenerationClosesWhateverItsAge() {
        #expect(window.after(generation(count: 999), adding: 2, bytes: 1, nowMilliseconds: start).opened)
        #expect(!window.after(generation(count: 998), adding: 2, bytes: 1, nowMilliseconds: start).opened)
        #expect(
            window.after(generation(count: 1, bytes: 9_990), adding: 1, bytes: 11, nowMilliseconds: start)
                .opened)
        // An empty one takes whatever comes, even more than it could hold.
        #expect(!window.after(generation(count: 0), adding: 2_000, bytes: 1, nowMilliseconds: start).opened)
    }

    /// A generation's age is the least of the wall clock's and how long this replica has known
    /// it: a clock set ahead (here, or at the replica that opened it) closes nothing early.
    @Test func aClockSetAheadClosesNoGenerationEarly() {
        let elevenMinutes: Int64 = 660_000
        // Known for a second, by a wall clock eleven minutes ahead: a second old.
        let judged = RequestIDWindow.judgedNow(
            wallMilliseconds: start + elevenMinutes, startedMilliseconds: start, knownForMilliseconds: 1_000)
        #expect(judged == start + 1_000)
        #expect(!window.after(generation(count: 500), adding: 1, bytes: 1, nowMilliseconds: judged).opened)
        // The wall clock unjudged would have closed it, and forgotten the generation before.
        #expect(
            window.after(generation(count: 500), adding: 1, bytes: 1, nowMilliseconds: start + elevenMinutes)
                .opened)
        // Known long enough, and the wall clock agrees: it closes.
        let due = RequestIDWindow.judgedNow(
            wallMilliseconds: start + elevenMinutes, startedMilliseconds: start,
            knownForMilliseconds: elevenMinutes)
        #expect(window.after(generation(count: 500), adding: 1, bytes: 1, nowMilliseconds: due).opened)
    }

    @Test func aWallClockBehindOrARestartOnlyKeepsAGenerationLonger() {
        // A wall clock behind the opener's: younger than known, so judged by the wall clock.
        #expect(
            RequestIDWindow.judgedNow(
                wallMilliseconds: start + 5_000, startedMilliseconds: start, knownForMilliseconds: 60_000)
                == start + 5_000)
        // A replica that has just started knows the generation for no time at all: age zero.
        #expect(
            RequestIDWindow.judgedNow(
                wallMilliseconds: start + 900_000, startedMilliseconds: start, knownForMilliseconds: 0)
                == start)
        // A reading from before it knew it counts as none, never as a negative age.
        #expect(
            RequestIDWindow.judgedNow(
                wallMilliseconds: start + 900_000, startedMilliseconds: start, knownForMilliseconds: -50)
                == start)
    }

    /// A start so late that the sum with the time known overflows is judged at the wall clock.
    @Test func aLateStartDoesNotOverflowTheJudgedNow() {
        #expect(
            RequestIDWindow.judgedNow(
                wallMilliseconds: 5_000, startedMilliseconds: .max, knownForMilliseconds: 10) == 5_000)
    }

    @Test func itsValueRoundTripsAndABadOneIsRefused() throws {
        let value = generation(count: 7, bytes: 70)
        #expect(RequestIDWindow.Generation(value.encoded) == value)
        #expect(String(decoding: value.encoded, as: UTF8.self) == "3 1000000 7 70 0 0")
        let seqs = RequestIDWindow.Generation(
            number: 3, startedMilliseconds: start, count: 7, bytes: 70, firstSeq: 500, previousFirstSeq: 20)
        #expect(String(decoding: seqs.encoded, as: UTF8.self) == "3 1000000 7 70 500 20")
        #expect(RequestIDWindow.Generation(seqs.encoded) == seqs)
        // A store from before the id log: its ids are keys; it reads as starting at seq 0.
        let legacy = try #require(RequestIDWindow.Generation(Data("3 1000000 7 70".utf8)))
        #expect(legacy.isLegacy && legacy.firstSeq == 0 && legacy.count == 7 && !value.isLegacy)
        for bad in [
            "", "3 1000000 7", "3 x 7 70", "3 1000000 -1 70", "not a generation", "3 1 2 3 4",
            "3 1 2 3 4 x", "3 1 2 3 4 5", "3 1 2 3 4 5 6", "3  1 2 3 4",
            // Values no store reaches, each of which made a commit's sum or step overflow.
            "1 9223372036854775807 0 0 0 0", "1 1000000 9223372036854775807 0 0 0",
            "1 1000000 0 9223372036854775807 0 0", "18446744073709551615 1000000 0 0 0 0",
            "1 -5 0 0 0 0", "1 1000000 0 0 18446744073709551615 0",
        ] {
            #expect(RequestIDWindow.Generation(Data(bad.utf8)) == nil, "\(bad)")
        }
    }
}
