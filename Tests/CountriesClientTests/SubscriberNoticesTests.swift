import CountriesClient
import CountriesCore
import Testing

/// What `events`, `on-change` and a piped `watch` say on stderr about their connection.
@Suite struct SubscriberNoticesTests {
    let start = ContinuousClock.now
    let endpoints = LiveSubscription.Endpoints(
        command: "tcp://127.0.0.1:5555", events: "tcp://127.0.0.1:5556")

    /// Nothing there at start: silent for the patience, then "waiting for" once, then live.
    @Test func waitingOnceWhileTheFirstListIsLate() {
        var notices = SubscriberNotices(endpoints: endpoints, patience: .seconds(1), now: start)
        #expect(notices.lines(phase: .connecting, seq: nil, now: start + .milliseconds(999)).isEmpty)
        #expect(
            notices.lines(phase: .connecting, seq: nil, now: start + .seconds(1)) == [
                "waiting for tcp://127.0.0.1:5555 (events tcp://127.0.0.1:5556)"
            ])
        #expect(notices.lines(phase: .connecting, seq: nil, now: start + .seconds(9)).isEmpty, "said once")
        #expect(notices.lines(phase: .live, seq: 4, now: start + .seconds(10)) == ["live at seq 4"])
        #expect(notices.lines(phase: .live, seq: 5, now: start + .seconds(11)).isEmpty)
    }

    /// A first list without a heartbeat yet is stale, but it was never live: still waiting,
    /// and not said twice.
    @Test func staleBeforeTheFirstLiveIsStillWaiting() {
        var notices = SubscriberNotices(endpoints: endpoints, patience: .seconds(1), now: start)
        #expect(notices.lines(phase: .stale("no heartbeat for 3 s"), seq: 0, now: start).isEmpty)
        #expect(
            notices.lines(phase: .stale("no heartbeat for 3 s"), seq: 0, now: start + .seconds(2)).count == 1)
        #expect(notices.lines(phase: .live, seq: 0, now: start + .seconds(3)) == ["live at seq 0"])
    }

    /// Events the subscriber dropped itself are said once an episode, before the gap they make,
    /// and again only after it was live in between.
    @Test func dropsAreSaidOnceUntilLiveAgain() {
        var notices = SubscriberNotices(endpoints: endpoints, patience: .seconds(1), now: start)
        #expect(notices.lines(phase: .live, seq: 0, now: start) == ["live at seq 0"])
        #expect(notices.lines(phase: .live, seq: 1, now: start, droppedEvents: 0).isEmpty)
        #expect(
            notices.lines(phase: .stale("missed events 2-40"), seq: 1, now: start, droppedEvents: 39) == [
                "fell behind: 39 events dropped here, they came faster than this subscriber took them; catching up",
                "stale: missed events 2-40; waiting for tcp://127.0.0.1:5555 (events tcp://127.0.0.1:5556)",
            ])
        #expect(
            notices.lines(phase: .stale("missed events 2-40"), seq: 1, now: start, droppedEvents: 80).isEmpty,
            "said once while it has not caught up")
        #expect(notices.lines(phase: .live, seq: 90, now: start, droppedEvents: 80) == ["live at seq 90"])
        #expect(
            notices.lines(phase: .live, seq: 90, now: start, droppedEvents: 85) == [
                "fell behind: 5 events dropped here, they came faster than this subscriber took them; catching up"
            ], "counted from the last look")
    }

    /// A list in time: no "waiting" at all, just live.
    @Test func aPromptServiceIsOnlyLive() {
        var notices = SubscriberNotices(endpoints: endpoints, patience: .seconds(1), now: start)
        #expect(notices.lines(phase: .live, seq: 0, now: start + .milliseconds(5)) == ["live at seq 0"])
        #expect(notices.lines(phase: .live, seq: 0, now: start + .seconds(5)).isEmpty)
    }

    /// Each time the view goes stale it says why and where it waits; each time it is back, the seq.
    @Test func everyStaleSpellSaysWhereItWaits() {
        var notices = SubscriberNotices(endpoints: endpoints, patience: .seconds(1), now: start)
        _ = notices.lines(phase: .live, seq: 0, now: start)
        let stale = SubscriptionPhase.stale("no heartbeat for 3 s")
        #expect(
            notices.lines(phase: stale, seq: 0, now: start + .seconds(4)) == [
                "stale: no heartbeat for 3 s; waiting for tcp://127.0.0.1:5555 (events tcp://127.0.0.1:5556)"
            ])
        #expect(notices.lines(phase: stale, seq: 0, now: start + .seconds(8)).isEmpty)
        #expect(notices.lines(phase: .live, seq: 2, now: start + .seconds(9)) == ["live at seq 2"])
        #expect(notices.lines(phase: stale, seq: 2, now: start + .seconds(20)).count == 1, "again next time")
    }
}
