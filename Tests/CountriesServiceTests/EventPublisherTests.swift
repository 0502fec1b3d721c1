import CountriesCore
import CountriesSockets
import Foundation
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesService

/// The publisher against a subscriber on inproc: each event goes out under its topic, a
/// heartbeat claims the seq of the last event published (the loaded one before any), and held
/// heartbeats send nothing and are logged once when they stop and once when they resume.
@Suite struct EventPublisherTests {
    /// A window nothing here comes near.
    private static let roomy = ForwardingWindow(messages: 100, bytes: 1 << 20)

    /// A PUB bound on inproc and a SUB of every topic connected to it.
    private struct Wire {
        let context: Context
        let publisher: Socket
        let subscriber: Socket

        init() throws {
            context = try Context()
            publisher = try context.makeSocket(.pub)
            subscriber = try context.makeSocket(.sub)
            for socket in [publisher, subscriber] { try socket.setOption(.linger, 0) }
            try subscriber.setOption(.receiveTimeout, patienceMilliseconds)
            try publisher.bind("inproc://events")
            try subscriber.connect("inproc://events")
            try subscriber.subscribe()
        }

        /// The next message, or nil when none comes within the patience.
        func next() throws -> [Data]? { try subscriber.receive() }

        /// Whether a message is waiting now.
        func hasMessage() throws -> Bool { try subscriber.receive(dontWait: true) != nil }

        func close() {
            subscriber.close()
            publisher.close()
            context.terminate()
        }
    }

    @Test func eventsGoOutUnderTheirTopicsAndHeartbeatsClaimTheLastSeq() throws {
        let wire = try Wire()
        defer { wire.close() }
        let (logger, lines) = Logger.collecting(.info)
        let publisher = EventPublisher(
            socket: wire.publisher, publishedSeq: 41, window: Self.roomy, logger: logger)
        // A PUB drops what it sends before the subscription reaches it: heartbeat until one comes.
        var first: [Data]?
        #expect(
            try eventually(every: .milliseconds(5)) {
                publisher.heartbeat(store: "store-1", heldBecause: nil)
                first = try wire.subscriber.receive(dontWait: true)
                return first != nil
            })
        let heartbeat = try #require(first)
        #expect(heartbeat.first == Data(Topic.heartbeat.rawValue.utf8))
        #expect(try Heartbeat.decode(heartbeat[1]) == Heartbeat(seq: 41, store: "store-1"))
        while try wire.hasMessage() {}

        let body = Array(#"{"seq":42}"#.utf8)
        publisher.publish(topic: .countryChanged, seq: 42, body: body)
        #expect(try wire.next() == [Data(Topic.countryChanged.rawValue.utf8), Data(body)])
        #expect(publisher.publishedSeq == 42)
        publisher.heartbeat(store: "store-1", heldBecause: nil)
        let next = try #require(try wire.next())
        #expect(try Heartbeat.decode(next[1]) == Heartbeat(seq: 42, store: "store-1"))
        #expect(lines.withLock { $0 }.isEmpty)
    }

    @Test func heldHeartbeatsSendNothingAndAreLoggedOnChange() throws {
        let wire = try Wire()
        defer { wire.close() }
        let (logger, lines) = Logger.collecting(.info)
        let publisher = EventPublisher(
            socket: wire.publisher, publishedSeq: 7, window: Self.roomy, logger: logger)
        // Connected: a published event arrives.
        #expect(
            eventually {
                publisher.publish(topic: .countryAdded, seq: 7, body: Array("{}".utf8))
                return (try? wire.hasMessage()) == true
            })
        while try wire.hasMessage() {}

        publisher.heartbeat(store: "s", heldBecause: "no quorum")
        publisher.heartbeat(store: "s", heldBecause: "no quorum")
        #expect(publisher.heartbeatsHeld)
        // An event still goes out while heartbeats are held, and is the only message.
        publisher.publish(topic: .countryRemoved, seq: 8, body: Array("{}".utf8))
        #expect(try wire.next()?.first == Data(Topic.countryRemoved.rawValue.utf8))
        #expect(try !wire.hasMessage())
        publisher.heartbeat(store: "s", heldBecause: nil)
        let resumed = try #require(try wire.next())
        #expect(try Heartbeat.decode(resumed[1]) == Heartbeat(seq: 8, store: "s"))
        #expect(!publisher.heartbeatsHeld)
        let logged = lines.withLock { $0 }
        #expect(logged.count == 2)
        #expect(logged.first?.contains("heartbeats stopped: no quorum") == true)
        #expect(logged.last?.contains("heartbeats resumed at seq 8") == true)
    }

    /// What a subscriber that stops reading can hold is bounded in bytes: an event that would
    /// make the last run too large is not sent, to anyone, and logged; its seq counts as
    /// published, so the next heartbeat shows the gap; once the run has moved on, big events
    /// go out again.
    @Test func anEventThatWouldOverfillTheWindowIsSkippedAndTheGapShows() throws {
        let wire = try Wire()
        defer { wire.close() }
        let (logger, lines) = Logger.collecting(.info)
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 2_000)
        let heavy = ForwardingWindow.weight(
            bytes: Topic.countriesReset.rawValue.utf8.count + big.count, frames: 2)
        // Runs of 3 messages, room for one big event and two heartbeats, not two big events.
        let publisher = EventPublisher(
            socket: wire.publisher, publishedSeq: 0,
            window: ForwardingWindow(messages: 3, bytes: 2 * heavy - 1),
            logger: logger)
        #expect(
            eventually {
                publisher.heartbeat(store: "s", heldBecause: nil)
                return (try? wire.hasMessage()) == true
            })
        while try wire.hasMessage() {}
        // The heartbeats above are in the run: let them pass with small events first.
        for seq in 1...3 {
            publisher.publish(topic: .countryChanged, seq: UInt64(seq), body: Array("{}".utf8))
        }
        while try wire.hasMessage() {}

        publisher.publish(topic: .countriesReset, seq: 4, body: big)
        #expect(try wire.next()?.last == Data(big))
        publisher.publish(topic: .countriesReset, seq: 5, body: big)
        #expect(try !wire.hasMessage(), "a second big event in the run is not sent")
        #expect(publisher.publishedSeq == 5, "but its seq counts as published")
        publisher.heartbeat(store: "s", heldBecause: nil)
        let claimed = try #require(try wire.next())
        #expect(try Heartbeat.decode(claimed[1]).seq == 5, "the heartbeat shows the gap")
        #expect(lines.withLock { $0 }.contains { $0.contains("did not publish this countries.reset") })

        publisher.heartbeat(store: "s", heldBecause: nil)
        #expect(try wire.next() != nil)
        publisher.publish(topic: .countriesReset, seq: 6, body: big)
        #expect(try wire.next()?.last == Data(big), "the run moved on: big events go out again")
    }
}
