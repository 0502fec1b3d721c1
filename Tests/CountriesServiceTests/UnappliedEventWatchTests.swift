import CountriesCore
import CountriesReplication
import Synchronization
import SystemSupport
import Testing

@testable import CountriesService

/// ``UnappliedEventWatch`` keeps an event that did not apply as damage until the replica's
/// state is past it, however often the tail clears damage by reading the log again.
@Suite struct UnappliedEventWatchTests {
    private static let forged = Event(
        seq: 8, kind: .added(IndexedCountry(index: 250, name: "Atlantis", visited: false)), store: "s")

    @Test func anEventThatAppliesIsPublishedAndRecordsNothing() {
        let health = ClusterHealth(quorumTimeout: .seconds(5))
        var watch = UnappliedEventWatch(health: health, logger: Logger(level: .error) { _ in })
        let published = watch.mayPublish(Self.forged, mismatch: nil)
        #expect(published)
        watch.check(stateSeq: 7)
        #expect(health.damage == nil)
    }

    @Test func anEventThatDoesNotApplyStaysDamageUntilTheStateIsPastIt() {
        let health = ClusterHealth(quorumTimeout: .seconds(5))
        let lines = Mutex<[String]>([])
        var watch = UnappliedEventWatch(
            health: health, logger: Logger(level: .info) { line in lines.withLock { $0.append(line) } })

        let published = watch.mayPublish(Self.forged, mismatch: "index 250 is past the end")
        #expect(!published)
        let damage = health.damage
        #expect(damage?.hasPrefix("event 8 in etcd does not apply to the list at seq 7") == true)
        // The same event read again is logged once.
        let publishedAgain = watch.mayPublish(Self.forged, mismatch: "index 250 is past the end")
        #expect(!publishedAgain)
        #expect(lines.withLock { $0.count } == 1)

        // The tail re-read the log and found its values whole: the event still does not apply.
        health.recordLogReadable()
        watch.check(stateSeq: 7)
        #expect(health.damage == damage)

        // A read caught the state up past it (the key was rewritten with a change that applies).
        watch.check(stateSeq: 8)
        #expect(health.damage == nil)
        watch.check(stateSeq: 9)
        #expect(health.damage == nil)
        #expect(lines.withLock { $0.last?.contains("applies again past seq 8") } == true)
    }
}
