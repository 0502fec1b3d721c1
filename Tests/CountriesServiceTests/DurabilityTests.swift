import CountriesCore
import Foundation
import Testing

/// Exactly once under retries, and state and seq across clean restarts.
@Suite struct DurabilityTests {
    @Test func aRetriedIDGetsTheFirstReplyByteForByteAndChangesNothing() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let events = try service.subscriber()

        let id = freshID()
        let toggle = Request(id: id, command: .change(.toggle(.name("Italy"))))
        let first = try service.rawRequest([toggle.encoded()])
        let retried = try service.rawRequest([toggle.encoded()])
        #expect(retried == first)
        #expect(try RawReply(first).reply.seq == 1)
        #expect(try service.snapshot().seq == 1)
        #expect(try service.request(.query(.get(.name("Italy")))).reply.country?.visited == true)

        // The same id with another command is refused, and changes nothing.
        let other = Request(id: id, command: .change(.remove(.index(0))))
        let conflict = try RawReply(try service.rawRequest([other.encoded()]))
        #expect(conflict.code == "conflict")
        #expect(conflict.message.hasPrefix("this id was used for another request"))
        #expect(try service.snapshot().count == 8)
        #expect(try service.rawRequest([toggle.encoded()]) == first, "the id still answers its request")

        // A different id does change.
        let second = try service.request(Request(id: freshID(), command: .change(.toggle(.name("Italy")))))
        #expect(second.reply.seq == 2)
        #expect(second.reply.country?.visited == false)

        // Only two events went out.
        #expect(try nextEvent(events).map { try $0.event().seq } == 1)
        #expect(try nextEvent(events).map { try $0.event().seq } == 2)
        #expect(try nextEvent(events, within: .milliseconds(200)) == nil)
    }

    @Test func aRefusalIsRememberedUnderItsIDToo() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let id = freshID()
        let stale = Request(id: id, command: .change(.toggle(.index(0), ifSeq: 5)))
        let first = try service.rawRequest([stale.encoded()])
        #expect(try RawReply(first).code == "conflict")
        #expect(try service.rawRequest([stale.encoded()]) == first)
        #expect(try service.snapshot().seq == 0)
    }

    @Test func theRequestIDMemorySurvivesARestart() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let id = freshID()
        let add = Request(id: id, command: .change(.add(name: "Norway")))
        let first = try service.rawRequest([add.encoded()])
        #expect(try RawReply(first).reply.seq == 1)

        try service.restart()
        #expect(try service.rawRequest([add.encoded()]) == first)
        let state = try service.snapshot()
        #expect(state.seq == 1)
        #expect(state.count == 9)
        let again = try service.request(Request(id: freshID(), command: .change(.toggle(.name("Norway")))))
        #expect(again.reply.seq == 2)
    }

    @Test func stateAndSeqSurviveACleanRestartAndSeqContinues() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        _ = try service.request(#"{"op":"toggle","name":"France"}"#)
        _ = try service.request(#"{"op":"add","name":"Mexico","visited":true}"#)
        _ = try service.request(#"{"op":"remove","name":"Russia"}"#)
        let before = try service.snapshot()
        #expect(before.seq == 3)

        try service.restart()
        #expect(try service.snapshot() == before)
        #expect(try service.request(.status).reply.seq == 3)
        let events = try service.subscriber()
        let next = try service.request(#"{"op":"toggle","name":"Mexico"}"#).reply
        #expect(next.seq == 4, "seq continues after a restart, never reused")
        #expect(try nextEvent(events).map { try $0.event().seq } == 4)
        // History spans the restart.
        #expect(try service.request(.history(since: 0)).reply.events?.map(\.seq) == [1, 2, 3, 4])
    }

    @Test func resetGivesTheSeedListOfTheRunningService() throws {
        let first = [Country(name: "Alpha"), Country(name: "Beta", visited: true)]
        let second = [
            Country(name: "Gamma", visited: true), Country(name: "Delta"), Country(name: "Epsilon"),
        ]
        let service = try ServiceHarness(seed: first)
        defer { service.shutdown() }

        _ = try service.request(#"{"op":"toggle","name":"Alpha"}"#)
        try service.restart(seed: second)
        // The store keeps its list; the new seed only matters for reset.
        let kept = try service.snapshot()
        #expect(
            kept.countries == [Country(name: "Alpha", visited: true), Country(name: "Beta", visited: true)])
        #expect(kept.seq == 1)
        let reset = try service.request(.change(.reset)).reply
        #expect(reset.seq == 2)
        #expect(reset.countries?.map(\.country) == second)
        #expect(try service.snapshot() == CountriesState(countries: second, seq: 2))
    }
}
