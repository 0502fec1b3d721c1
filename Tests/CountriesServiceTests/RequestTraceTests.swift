import CountriesCore
import Foundation
import Testing

@testable import CountriesService

/// A trace is a value: copies are apart, whatever shares its storage.
@Suite struct RequestTraceTests {
    @Test func copiesChangeApart() throws {
        #expect(RequestTrace.none.op == nil && RequestTrace.none.id == nil)
        #expect(RequestTrace.none.peer == nil && RequestTrace.none.received == nil)
        let now = ContinuousClock.now
        let first = RequestTrace(peer: "a", received: now)
        var second = first
        second.peer = "b"
        second.op = "toggle"
        #expect(first.peer == "a" && first.op == nil)
        #expect(second.peer == "b" && second.op == "toggle" && second.received == now)

        var fromNothing = RequestTrace.none
        fromNothing.id = "x"
        #expect(fromNothing.id == "x" && RequestTrace.none.id == nil)

        let request = try Request.decode(Data(#"{"op":"toggle","index":1,"id":"r1"}"#.utf8))
        let named = first.naming(request)
        #expect(named.op == "toggle" && named.id == "r1" && named.peer == "a" && named.received == now)
        #expect(first.op == nil && first.id == nil, "naming leaves the original as it was")
    }

    /// A copy already handed on (to a staged change, an answer) keeps its fields when the one
    /// it came from changes after.
    @Test func aTraceGivenAwayKeepsItsFieldsWhenTheGiverChanges() {
        var original = RequestTrace(op: "list", id: "i", peer: "p", received: .now)
        let given = original
        original.op = "count"
        original.id = nil
        #expect(given.op == "list" && given.id == "i" && given.peer == "p")
        #expect(original.op == "count" && original.id == nil && original.peer == "p")
        #expect(RequestTrace(op: nil, id: nil, peer: nil, received: nil).op == nil)
    }
}
