import Testing

@testable import CountriesTerminal

@Suite struct CoalescerTests {
    @Test func aBurstIsPacedAndTheLastStateDrawn() {
        let start = ContinuousClock.now
        let coalescer = CoalescerHarness()
        var drawn: [Int] = []
        var latest = -1
        // 1,000 changes in one second, one a millisecond; the loop checks after each.
        for step in 0..<1000 {
            let now = start + .milliseconds(step)
            latest = step
            coalescer.markDirty(now: now)
            if coalescer.drawIfDue(now: now) { drawn.append(latest) }
        }
        // Then the loop waits until the deadline and draws what is left.
        let end = start + .milliseconds(999)
        if let wait = coalescer.timeUntilDraw(now: end) {
            #expect(wait <= .seconds(1) / 60)
            let now = end + wait
            if coalescer.drawIfDue(now: now) { drawn.append(latest) }
        }
        #expect(drawn.count <= 61)
        #expect(drawn.count >= 55)
        #expect(drawn.last == 999)
        #expect(coalescer.timeUntilDraw(now: end + .seconds(1)) == nil)
    }

    @Test func aChangeAfterAQuietSpellDrawsAtOnce() {
        let start = ContinuousClock.now
        let coalescer = CoalescerHarness()
        #expect(!coalescer.drawIfDue(now: start))
        #expect(coalescer.markDirty(now: start) == start)
        #expect(coalescer.drawIfDue(now: start))
        let later = start + .seconds(2)
        coalescer.markDirty(now: later)
        #expect(coalescer.timeUntilDraw(now: later) == .zero)
        #expect(coalescer.drawIfDue(now: later))
    }

    @Test func aChangeSoonAfterADrawWaits() {
        let start = ContinuousClock.now
        let coalescer = CoalescerHarness(minimumInterval: .milliseconds(20))
        coalescer.markDirty(now: start)
        #expect(coalescer.drawIfDue(now: start))
        let soon = start + .milliseconds(5)
        #expect(coalescer.markDirty(now: soon) == start + .milliseconds(20))
        #expect(!coalescer.drawIfDue(now: soon))
        #expect(coalescer.timeUntilDraw(now: soon) == .milliseconds(15))
        #expect(coalescer.drawIfDue(now: start + .milliseconds(20)))
    }
}

// A reference wrapper, so that `#expect` (which evaluates its operands as immutable values) can
// call the mutating methods.
final class CoalescerHarness {
    var coalescer: FrameCoalescer<ContinuousClock.Instant>
    init(minimumInterval: Duration = .seconds(1) / 60) {
        coalescer = FrameCoalescer(minimumInterval: minimumInterval)
    }
    @discardableResult
    func markDirty(now: ContinuousClock.Instant) -> ContinuousClock.Instant { coalescer.markDirty(now: now) }
    func drawIfDue(now: ContinuousClock.Instant) -> Bool { coalescer.drawIfDue(now: now) }
    func timeUntilDraw(now: ContinuousClock.Instant) -> Duration? { coalescer.timeUntilDraw(now: now) }
}
