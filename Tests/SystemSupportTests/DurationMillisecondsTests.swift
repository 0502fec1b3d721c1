import Testing

@testable import SystemSupport

/// A wait in whole milliseconds never ends before the duration has passed, on either side of
/// where the computation changes from 64-bit to 128-bit integers (about 9.2 seconds).
@Suite struct DurationMillisecondsTests {
    @Test(arguments: [
        (Duration.zero, 0),
        (.nanoseconds(-1), 0),
        (.seconds(-5), 0),
        (.nanoseconds(1), 1),
        (.microseconds(999), 1),
        (.milliseconds(1), 1),
        (.nanoseconds(1_000_001), 2),
        (.milliseconds(1_500), 1_500),
        (.seconds(9), 9_000),
        (.seconds(9) + .nanoseconds(223_372_036), 9_224),
        (.seconds(10) + .nanoseconds(1), 10_001),
        (.seconds(3_600), 3_600_000),
        (.seconds(Int64.max), Int.max),
    ])
    func wholeMillisecondsRoundUp(duration: Duration, expected: Int) {
        #expect(duration.millisecondsRoundedUp == expected)
    }

    /// The same answer as the division it replaces, around the point where it changes method.
    @Test func agreesWithTheDivisionAroundTheSwitch() {
        let switchPoint = Duration(attoseconds: Int128(Int64.max - 1_000_000_000_000_000))
        for step in -3...3 {
            let duration = switchPoint + .nanoseconds(step * 400_000)
            let divided = Int((duration / .milliseconds(1)).rounded(.up))
            #expect(duration.millisecondsRoundedUp == divided, "at \(duration)")
        }
    }
}
