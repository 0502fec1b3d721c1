import Foundation
import Testing
import ZeroMQ

@Suite("Publish/subscribe")
struct PubSubTests {
    /// Publishes `probe` until `subscriber` sees it: subscriptions travel to the publisher
    /// asynchronously, and until they arrive it drops everything ("slow joiner").
    private func synchronize(_ publisher: Socket, _ subscriber: Socket, probe: String) throws -> Bool {
        for _ in 0..<200 {
            try publisher.send([frame(probe)])
            if try subscriber.receive() != nil {
                // Drain any further probes already on their way.
                while try subscriber.receive() != nil {}
                return true
            }
        }
        return false
    }

    @Test("SUB gets only messages whose first frame starts with a subscribed prefix")
    func topicFiltering() throws {
        let context = try Context()
        let publisher = try context.testSocket(.pub)
        let subscriber = try context.testSocket(.sub, timeout: 20)
        try publisher.bind("inproc://news")
        try subscriber.connect("inproc://news")
        try subscriber.subscribe("news.")
        #expect(try synchronize(publisher, subscriber, probe: "news.sync"))

        try publisher.send([frame("sports.football"), frame("body")])
        try publisher.send([frame("news.world"), frame("body 1")])
        try publisher.send([frame("new"), frame("too short a prefix")])
        try publisher.send([frame("news.local"), frame("body 2")])

        try subscriber.setOption(.receiveTimeout, patience)
        #expect(texts(try subscriber.receive()) == ["news.world", "body 1"])
        #expect(texts(try subscriber.receive()) == ["news.local", "body 2"])
        try subscriber.setOption(.receiveTimeout, 100)
        #expect(try subscriber.receive() == nil)

        // After unsubscribing nothing more arrives.
        try subscriber.unsubscribe("news.")
        try subscriber.subscribe("sports.")
        #expect(try synchronize(publisher, subscriber, probe: "sports.sync"))
        try publisher.send([frame("news.late")])
        #expect(try subscriber.receive() == nil)
    }

    @Test("XSUB subscribes by sending a subscription message")
    func xsubSubscribe() throws {
        let context = try Context()
        let publisher = try context.testSocket(.pub)
        let subscriber = try context.testSocket(.xsub, timeout: 20)
        try publisher.bind("inproc://xsub")
        try subscriber.connect("inproc://xsub")
        try subscriber.subscribe("a")
        #expect(try synchronize(publisher, subscriber, probe: "a.sync"))

        try publisher.send([frame("b")])
        try publisher.send([frame("a1")])
        try subscriber.setOption(.receiveTimeout, patience)
        #expect(texts(try subscriber.receive()) == ["a1"])
    }
}
