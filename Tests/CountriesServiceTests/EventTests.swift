import CountriesCore
import Foundation
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
