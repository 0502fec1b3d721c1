import Testing
import ZeroMQ

/// When a silent subscriber connects anew: after `after` without a message, then every `after`
/// while the silence lasts; a message puts it off.
@Suite struct SilenceReconnectionTests {
    @Test func dueAfterTheSilenceThenEveryIntervalUntilHeard() {
        let start = ContinuousClock.now  // a time given to the value, not waited
        var schedule = SilenceReconnection(after: .seconds(5))
        #expect(schedule.deadline(lastHeard: start) == start + .seconds(5))
        var due = schedule.isDue(lastHeard: start, now: start + .seconds(4))
        #expect(!due)
        let heard = start + .seconds(4)
        due = schedule.isDue(lastHeard: heard, now: start + .seconds(8))
        #expect(!due, "a message puts it off")
        due = schedule.isDue(lastHeard: heard, now: start + .seconds(9))
        #expect(due)
        due = schedule.isDue(lastHeard: heard, now: start + .seconds(10))
        #expect(!due, "once per silence of `after`")
        #expect(schedule.deadline(lastHeard: heard) == start + .seconds(14))
        due = schedule.isDue(lastHeard: heard, now: start + .seconds(14))
        #expect(due)
        // A message after a reconnection counts from itself.
        #expect(schedule.deadline(lastHeard: start + .seconds(20)) == start + .seconds(25))
    }
}
