import CountriesClient
import CountriesCore
import Testing

/// When a client of replicas asks `status` which endpoint writes, and what each answer means
/// (docs/PROTOCOL.md, "Clients of replicas"): no sockets, the clock given.
@Suite struct WriterRouteTests {
    let endpoints = ["tcp://a:5555", "tcp://b:5555", "tcp://c:5555"]
    let start = ContinuousClock.now

    @Test func aSingleEndpointNeverAsks() {
        let route = WriterRoute(endpoints: ["tcp://a:5555"])
        #expect(!route.isDue(now: start))
    }

    @Test func severalEndpointsAskFirstThenAfterTheAnswerStopsHolding() {
        var route = WriterRoute(endpoints: endpoints)
        #expect(route.isDue(now: start))
        _ = route.learn(writerField: ServiceStatus.thisReplica, from: 1, now: start)
        #expect(!route.isDue(now: start))
        #expect(!route.isDue(now: start + WriterRoute.freshFor - .milliseconds(1)))
        #expect(route.isDue(now: start + WriterRoute.freshFor))
    }

    /// A change pinned by hand (`--if-store`) needs no read first, so a client that has never
    /// asked sends it straight on; once it has an answer, it keeps its route like any other.
    @Test func aFirstChangePinnedByHandAsksNothing() {
        var route = WriterRoute(endpoints: endpoints)
        #expect(!route.isDue(now: start, pinnedByHand: true))
        _ = route.learn(writerField: ServiceStatus.thisReplica, from: 1, now: start)
        route.changeEnded(answeredFrom: nil, now: start)
        #expect(route.isDue(now: start, pinnedByHand: true))
    }

    @Test func theAnsweringReplicaThatWritesIsTheWriter() {
        var route = WriterRoute(endpoints: endpoints)
        #expect(route.learn(writerField: ServiceStatus.thisReplica, from: 2, now: start) == 2)
        #expect(route.writer == 2)
    }

    @Test func aWriterNamedByAnotherReplicaIsFoundAmongTheEndpoints() {
        var route = WriterRoute(endpoints: endpoints)
        #expect(route.learn(writerField: "tcp://c:5555", from: 0, now: start) == 2)
    }

    /// `none` (no writer elected: each replica commits its own), a name the client was not
    /// given (the writer's host under another name), and no field (a single service): no
    /// writer, and the client keeps to the endpoint that answered, until the answer is old.
    @Test(arguments: ["none", "tcp://elsewhere:5555", nil] as [String?])
    func anAnswerNamingNoneOfTheEndpointsKnowsNoWriter(field: String?) {
        var route = WriterRoute(endpoints: endpoints)
        _ = route.learn(writerField: ServiceStatus.thisReplica, from: 1, now: start)
        #expect(route.learn(writerField: field, from: 0, now: start) == nil)
        #expect(route.writer == nil)
        #expect(!route.isDue(now: start), "asking again at every change would double its reads")
        var answered = route
        answered.changeEnded(answeredFrom: 2, now: start)
        #expect(!answered.isDue(now: start), "with no writer known, any endpoint answering is as expected")
    }

    /// The writer's endpoint timed out or refused, and another answered the change: the writer
    /// may have changed, so the next change asks again, without waiting out the answer's age.
    @Test func aChangeAnsweredElsewhereThanTheWriterAsksAgain() {
        var route = WriterRoute(endpoints: endpoints)
        _ = route.learn(writerField: ServiceStatus.thisReplica, from: 1, now: start)
        route.changeEnded(answeredFrom: 1, now: start)
        #expect(!route.isDue(now: start))
        route.changeEnded(answeredFrom: 0, now: start)
        #expect(route.isDue(now: start))
        #expect(route.writer == nil)
    }

    /// A writer this client cannot reach, while the replica that forwards can (the writer's
    /// CURVE allow-list lacks the client's key, say): named again by the next `status`, it is
    /// not followed until ``WriterRoute/freshFor`` has passed, so it costs one timeout in that
    /// time, not one per change.
    @Test func aWriterPassedOverIsNotFollowedAgainForAWhile() {
        var route = WriterRoute(endpoints: endpoints)
        _ = route.learn(writerField: "tcp://b:5555", from: 0, now: start)
        route.changeEnded(answeredFrom: 0, now: start)
        #expect(route.learn(writerField: "tcp://b:5555", from: 0, now: start + .seconds(1)) == nil)
        #expect(!route.isDue(now: start + .seconds(2)), "the answer holds: no status at every change")
        let later = start + WriterRoute.freshFor
        #expect(route.isDue(now: later + .seconds(1)))
        #expect(route.learn(writerField: "tcp://b:5555", from: 0, now: later) == 1, "tried again in time")
        #expect(
            route.learn(writerField: "tcp://c:5555", from: 0, now: start + .seconds(1)) == 2,
            "another writer is followed at once")
    }

    @Test func aChangeWithoutAReplyAsksAgain() {
        var route = WriterRoute(endpoints: endpoints)
        _ = route.learn(writerField: ServiceStatus.thisReplica, from: 1, now: start)
        route.changeEnded(answeredFrom: nil, now: start)
        #expect(route.isDue(now: start))
    }
}
