import Testing

@testable import CountriesRelay

/// The relay's log of a silent upstream (``UpstreamSilence``): one warning per silence, and a
/// line when the upstream is heard again.
@Suite struct UpstreamSilenceTests {
    @Test func aSilenceIsSaidOnceAndItsEndToo() {
        let start = ContinuousClock.now
        var silence = UpstreamSilence(upstream: "tcp://h:5556", since: start)
        #expect(silence.nextCheck == start + .seconds(3))
        #expect(silence.lastMessage == nil, "no message before the first")
        #expect(silence.check(now: start + .seconds(2)) == nil)
        #expect(
            silence.check(now: start + .seconds(3))
                == "nothing received from upstream tcp://h:5556 in the 3 s since the start: subscribers get no events and no heartbeats; is the service running there (--from)?"
        )
        #expect(silence.check(now: start + .seconds(9)) == nil, "said once")
        #expect(silence.nextCheck == nil)
        #expect(silence.heard(now: start + .seconds(10)) == "upstream tcp://h:5556 heard again after 10 s")
        #expect(silence.heard(now: start + .seconds(11)) == nil, "no silence to end")
        #expect(silence.lastMessage == start + .seconds(11))
        #expect(silence.nextCheck == start + .seconds(14))
        #expect(
            silence.check(now: start + .seconds(14))?.hasPrefix(
                "nothing received from upstream tcp://h:5556 for 3 s:") == true)
    }
}
