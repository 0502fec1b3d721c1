import CountriesCore
import Foundation
import TestSupport
import Testing

/// The PUB channel: events carry the reply's seq and the row, under the right topic.
@Suite struct EventTests {
    @Test func everyChangeIsPublishedWithTheReplySeqAndItsRow() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let events = try service.subscriber()

        let cases: [(request: String, topic: String)] = [
            (#"{"op":"toggle","name":"Spain"}"#, "country.changed"),
            (#"{"op":"set","index":4,"visited":false}"#, "country.changed"),
            (#"{"op":"add","name":"Ghana","visited":true}"#, "country.added"),
            (#"{"op":"remove","index":1}"#, "country.removed"),
            (#"{"op":"reset"}"#, "countries.reset"),
        ]
        for (request, topic) in cases {
            let reply = try service.request(request).reply
            #expect(reply.ok, "\(request)")
            let published = try #require(try nextEvent(events), "no event for \(request)")
            #expect(published.topic == topic, "\(request)")
            let event = try published.event()
            #expect(event.seq == reply.seq, "\(request)")
            #expect(event.topic.rawValue == topic)
            switch event.kind {
            case .changed(let row), .added(let row), .removed(let row):
                #expect(row == reply.country, "\(request)")
            case .reset(let rows):
                #expect(rows == reply.countries)
                #expect(rows.map(\.country) == SeedList.standard)
            }
            // The body stands alone: it names its topic too.
            let object = try JSONSerialization.jsonObject(with: published.body) as? [String: Any]
            #expect(object?["topic"] as? String == topic)
        }
    }

    @Test func aSetThatChangesNothingPublishesNothing() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let events = try service.subscriber()

        let noop = try service.request(#"{"op":"set","name":"United States","visited":true}"#).reply
        #expect(noop.ok && noop.seq == 0)
        let real = try service.request(#"{"op":"set","name":"France","visited":true}"#).reply
        #expect(real.seq == 1)
        // PUB keeps order: had the no-op published anything, it would come first.
        let store = try #require(try service.request(#"{"op":"list"}"#).reply.store)
        let first = try #require(try nextEvent(events))
        #expect(
            try first.event()
                == Event(
                    seq: 1, kind: .changed(IndexedCountry(index: 2, name: "France", visited: true)),
                    store: store))
    }

    @Test func refusalsAndReadsPublishNothing() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let events = try service.subscriber()

        for request in [
            #"{"op":"toggle","index":42}"#, #"{"op":"list"}"#, #"{"op":"add","name":"France"}"#,
            #"{"op":"status"}"#, "nonsense",
        ] {
            _ = try service.request(request)
        }
        let reply = try service.request(#"{"op":"toggle","index":7}"#).reply
        let first = try #require(try nextEvent(events))
        #expect(try first.event().seq == reply.seq)
        #expect(reply.seq == 1)
    }

    /// The service serves batch after batch while requests keep coming, but a turn ends after
    /// a batch's worth, so heartbeats (and signals) are not starved by a queue that never
    /// empties. Here one client keeps 2,000 requests queued for 1.5 s (times the sanitizers'
    /// slowdown).
    @Test func heartbeatsKeepComingWhileTheQueueNeverEmpties() throws {
        let service = try ServiceHarness(inMemory: true)
        defer { service.shutdown() }
        let events = try service.subscriber()
        let client = try service.commandSocket(.dealer)
        try client.setOption(.sendHighWaterMark, 0)
        let request = [Data(), Data(#"{"op":"count"}"#.utf8)]
        var outstanding = 0
        var answered = 0
        var beats: [ContinuousClock.Instant] = []
        let start = ContinuousClock.now
        let flood = Duration.milliseconds(1500 * testSlowdown)
        while ContinuousClock.now - start < flood {
            while outstanding < 2000 {
                guard try client.send(request) else { break }
                outstanding += 1
            }
            while (try client.receive(dontWait: true)) != nil {
                outstanding -= 1
                answered += 1
            }
            while let frames = try events.receive(dontWait: true) {
                if frames.first == Data(Topic.heartbeat.rawValue.utf8) { beats.append(.now) }
            }
        }
        let gaps = zip(beats.dropFirst(), beats).map { $0 - $1 }
        #expect(answered > 2000, "the queue was never full: \(answered) answered")
        #expect(beats.count >= 3, "\(beats.count) heartbeats in \(flood) (every 50 ms when idle)")
        #expect(
            (gaps.max() ?? .zero) < .milliseconds(500 * testSlowdown),
            "the longest gap: \(gaps.max() ?? .zero)")
        while outstanding > 0, try client.receive() != nil { outstanding -= 1 }
    }

    @Test func heartbeatsCarryTheCurrentSeq() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let events = try service.subscriber()

        _ = try service.request(#"{"op":"toggle","index":0}"#)
        _ = try service.request(#"{"op":"toggle","index":0}"#)
        // A heartbeat published after the second reply says seq 2; earlier ones may say less.
        let deadline = ContinuousClock.now + patience
        var seen: UInt64 = 0
        while seen < 2, ContinuousClock.now < deadline {
            let heartbeat = try #require(try nextHeartbeat(events))
            #expect(heartbeat.topic == .heartbeat)
            #expect(heartbeat.seq <= 2)
            seen = heartbeat.seq
        }
        #expect(seen == 2)
    }
}
