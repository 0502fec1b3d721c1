import CountriesClient
import CountriesCore
import Foundation
import Testing

/// Every op of docs/PROTOCOL.md ("Requests") over real sockets, with the reply fields it promises.
@Suite struct OperationTests {
    private let standardRows = SeedList.standard.enumerated().map { IndexedCountry($1, at: $0) }

    @Test func listReturnsEveryRowInOrderWithSeq() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let list = try service.request(#"{"op":"list"}"#)
        #expect(list.object["ok"] as? Bool == true)
        #expect(list.object["seq"] as? Int == 0)
        let rows = try #require(list.object["countries"] as? [[String: Any]])
        #expect(rows.count == 8)
        #expect(rows.first?["index"] as? Int == 0)
        #expect(rows.first?["name"] as? String == "United States")
        #expect(rows.first?["visited"] as? Bool == true)
        #expect(list.reply.countries == standardRows)
    }

    @Test func getByIndexAndByCaseInsensitiveName() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let byIndex = try service.request(#"{"op":"get","index":2}"#)
        #expect(byIndex.reply.ok && byIndex.reply.seq == 0)
        #expect(byIndex.reply.country == IndexedCountry(index: 2, name: "France", visited: false))
        let byName = try service.request(#"{"op":"get","name":"fRANCE"}"#)
        #expect(byName.reply.country == IndexedCountry(index: 2, name: "France", visited: false))
        #expect(byName.object["seq"] as? Int == 0)
    }

    @Test func countReturnsTheNumberOfRows() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let count = try service.request(#"{"op":"count"}"#)
        #expect(count.object["count"] as? Int == 8)
        #expect(count.object["seq"] as? Int == 0)
    }

    @Test func toggleByIndexAndByNameReturnsTheEventSeqAndTheRow() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let first = try service.request(#"{"op":"toggle","index":1}"#)
        #expect(first.reply.ok)
        #expect(first.reply.seq == 1)
        #expect(first.reply.country == IndexedCountry(index: 1, name: "United Kingdom", visited: true))
        let second = try service.request(#"{"op":"toggle","name":"united kingdom"}"#)
        #expect(second.reply.seq == 2)
        #expect(second.reply.country == IndexedCountry(index: 1, name: "United Kingdom", visited: false))
        let withIfSeq = try service.request(#"{"op":"toggle","index":0,"if_seq":2}"#)
        #expect(withIfSeq.reply.seq == 3)
        #expect(withIfSeq.reply.country == IndexedCountry(index: 0, name: "United States", visited: false))
    }

    @Test func setByIndexAndByNameAndASetThatChangesNothing() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let set = try service.request(#"{"op":"set","index":3,"visited":true}"#)
        #expect(set.reply.seq == 1)
        #expect(set.reply.country == IndexedCountry(index: 3, name: "Italy", visited: true))
        let unchanged = try service.request(#"{"op":"set","name":"ITALY","visited":true}"#)
        #expect(unchanged.reply.ok)
        #expect(unchanged.reply.seq == 1, "a set that changes nothing keeps the seq")
        #expect(unchanged.reply.country == IndexedCountry(index: 3, name: "Italy", visited: true))
        let back = try service.request(#"{"op":"set","name":"Italy","visited":false,"if_seq":1}"#)
        #expect(back.reply.seq == 2)
        #expect(back.reply.country?.visited == false)
        #expect(try service.snapshot().seq == 2)
    }

    @Test func addAppendsAtTheEndTrimmedAndOptionallyVisited() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let add = try service.request(#"{"op":"add","name":"  Portugal "}"#)
        #expect(add.reply.seq == 1)
        #expect(add.reply.country == IndexedCountry(index: 8, name: "Portugal", visited: false))
        let visited = try service.request(#"{"op":"add","name":"Japan","visited":true}"#)
        #expect(visited.reply.country == IndexedCountry(index: 9, name: "Japan", visited: true))
        let state = try service.snapshot()
        #expect(state.count == 10)
        #expect(state.rows.suffix(2).map(\.name) == ["Portugal", "Japan"])
    }

    @Test func removeByIndexAndByNameReturnsTheRowAsItWasAndShiftsTheRest() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let byIndex = try service.request(#"{"op":"remove","index":0}"#)
        #expect(byIndex.reply.seq == 1)
        #expect(byIndex.reply.country == IndexedCountry(index: 0, name: "United States", visited: true))
        let byName = try service.request(#"{"op":"remove","name":"moldova"}"#)
        #expect(byName.reply.seq == 2)
        #expect(byName.reply.country == IndexedCountry(index: 5, name: "Moldova", visited: false))
        let state = try service.snapshot()
        #expect(
            state.rows.map(\.name) == ["United Kingdom", "France", "Italy", "Spain", "Russia", "Romania"])
        #expect(try service.request(#"{"op":"get","name":"Romania"}"#).reply.country?.index == 5)
    }

    @Test func resetPutsBackTheSeedList() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        _ = try service.request(#"{"op":"remove","index":3}"#)
        _ = try service.request(#"{"op":"add","name":"Chile"}"#)
        _ = try service.request(#"{"op":"toggle","name":"France"}"#)
        let reset = try service.request(#"{"op":"reset"}"#)
        #expect(reset.reply.ok)
        #expect(reset.reply.seq == 4)
        #expect(reset.reply.countries == standardRows)
        #expect(try service.snapshot() == CountriesState(countries: SeedList.standard, seq: 4))
    }

    @Test func historyReturnsEveryEventAfterSinceWithItsTopic() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        _ = try service.request(#"{"op":"toggle","index":2}"#)
        _ = try service.request(#"{"op":"add","name":"Peru"}"#)
        _ = try service.request(#"{"op":"remove","name":"Peru"}"#)
        _ = try service.request(#"{"op":"reset"}"#)

        let all = try service.request(#"{"op":"history","since":0}"#)
        #expect(all.reply.seq == 4)
        let events = try #require(all.object["events"] as? [[String: Any]])
        #expect(events.map { $0["seq"] as? Int } == [1, 2, 3, 4])
        #expect(
            events.map { $0["topic"] as? String }
                == ["country.changed", "country.added", "country.removed", "countries.reset"])
        let store = try #require(all.reply.store)
        #expect(
            all.reply.events?[1]
                == Event(
                    seq: 2, kind: .added(IndexedCountry(index: 8, name: "Peru", visited: false)), store: store
                ))

        let later = try service.request(#"{"op":"history","since":2}"#)
        #expect(later.reply.events?.map(\.seq) == [3, 4])
        let none = try service.request(#"{"op":"history","since":4}"#)
        #expect(none.reply.ok && none.reply.events == [])
    }

    @Test func statusReportsSeqVersionUptimeAndCounts() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        _ = try service.request(#"{"op":"toggle","index":2}"#)
        _ = try service.request(#"{"op":"get","index":99}"#)
        let status = try service.request(#"{"op":"status"}"#)
        #expect(status.reply.ok)
        #expect(status.reply.seq == 1)
        #expect(status.reply.status?.version == "9.8.7-test")
        #expect(status.reply.count == 8)
        #expect(status.reply.status?.visited == 2)
        #expect(status.reply.status?.uptimeMilliseconds != nil)
        #expect(status.object["uptime_seconds"] != nil)
        #expect((status.reply.status?.commandsServed ?? 0) >= 1)
        #expect((status.reply.status?.commandsRefused ?? 0) >= 1)
        #expect(status.reply.status?.storePath == service.storePath)
        let list = try service.request(#"{"op":"list"}"#)
        #expect(status.reply.store?.count == 32 && status.reply.store == list.reply.store)
        #expect((status.reply.status?.storeBytes ?? 0) > 0)
        #expect(status.reply.status?.historyFrom == 1)
        #expect(status.reply.status?.endpoints == [service.commandEndpoint, service.eventsEndpoint])
    }

    @Test func theCommandClientSpeaksEveryOp() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let client = service.client()

        #expect(try client.send(.query(.count)).count == 8)
        #expect(try client.send(.query(.get(.name("spain")))).country?.index == 4)
        #expect(try client.send(.change(.toggle(.index(4)))).seq == 1)
        #expect(try client.send(.change(.set(.name("Spain"), visited: false))).seq == 2)
        #expect(try client.send(.change(.add(name: "Kenya", visited: true))).country?.index == 8)
        #expect(try client.send(.change(.remove(.index(8)))).country?.name == "Kenya")
        #expect(try client.send(.change(.reset)).countries == standardRows)
        #expect(try client.send(.history(since: 0)).events?.count == 5)
        #expect(try client.send(.status).seq == 5)
        #expect(try client.send(.query(.list)).countries == standardRows)
    }
}
