import Testing
import ZeroMQ

/// When a silent subscriber connects anew: after `after` without a message, then every `after`
/// while the silence lasts; a message puts it off.
@Suite struct SilenceReconnectionTests {
    @Test func dueAfterTheSilenceThenEveryIntervalUntilHeard() {
        let start = ContinuousClock.now  // a time given to the value, not waited
        var schedule = SilenceReconnection(after: .seconds(5), since: start)
        #expect(schedule.deadline == start + .seconds(5))
        var due = schedule.isDue(now: start + .seconds(4))
        #expect(!due)
        schedule.heard(now: start + .seconds(4))
        due = schedule.isDue(now: start + .seconds(8))
        #expect(!due, "a message puts it off")
        due = schedule.isDue(now: start + .seconds(9))
        #expect(due)
        due = schedule.isDue(now: start + .seconds(10))
        #expect(!due, "once per silence of `after`")
        #expect(schedule.deadline == start + .seconds(14))
        due = schedule.isDue(now: start + .seconds(14))
        #expect(due)
    }
}
