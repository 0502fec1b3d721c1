import CountriesCore
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
        let publisher = EventPublisher(socket: wire.publisher, publishedSeq: 41, logger: logger)
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
        let publisher = EventPublisher(socket: wire.publisher, publishedSeq: 7, logger: logger)
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
}
