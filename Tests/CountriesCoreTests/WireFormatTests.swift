import CountriesCore
import Foundation
import Testing

@Suite struct ReplyWireTests {
    @Test(arguments: CountriesError.Code.allCases)
    func errorReplyShapeAndFailureRoundTrip(code: CountriesError.Code) throws {
        let error = CountriesError(code, "something \"went\" wrong / here")
        let reply = Reply(error: error)
        let data = reply.encoded()
        #expect(
            text(data)
                == #"{"error":{"code":"\#(code.rawValue)","message":"something \"went\" wrong / here"},"ok":false}"#
        )
        let object = jsonObject(data)
        #expect(Set(object.keys) == ["ok", "error"])
        #expect(object["ok"] as? Bool == false)
        let body = object["error"] as? [String: Any]
        #expect(body?.count == 2)
        #expect(body?["code"] as? String == code.rawValue)
        #expect(body?["message"] as? String == "something \"went\" wrong / here")
        let decoded = try Reply.decode(data)
        #expect(decoded == reply)
        #expect(decoded.failure == error)
    }

    @Test func failureOfSuccessIsNil() {
        #expect(Reply(seq: 3).failure == nil)
        #expect(Reply(seq: 3, count: 2).failure == nil)
    }

    @Test func failureWithUnknownCodeOrNoBody() throws {
        let unknown = try Reply.decode(
            Data(#"{"ok":false,"error":{"code":"teapot","message":"short and stout"}}"#.utf8))
        #expect(unknown.failure == CountriesError(.badRequest, "short and stout"))
        let bare = try Reply.decode(Data(#"{"ok":false}"#.utf8))
        #expect(bare.failure == CountriesError(.badRequest, "the service sent an error without details"))
    }

    @Test func historyPageShapeWithMore() throws {
        let event = Event(seq: 3, kind: .changed(IndexedCountry(index: 2, name: "France", visited: true)))
        var reply = Reply(seq: 9, events: [event])
        reply.more = true
        let data = reply.encoded()
        #expect(
            text(data)
                == #"{"events":[{"country":{"index":2,"name":"France","visited":true},"seq":3,"topic":"country.changed"}],"more":true,"ok":true,"seq":9}"#
        )
        #expect(try Reply.decode(data) == reply)
        // An old service (or the last page) says nothing: `more` is absent, not false.
        let last = try Reply.decode(Data(#"{"events":[],"ok":true,"seq":9}"#.utf8))
        #expect(last.more == nil)
        #expect(!text(Reply(seq: 9, events: []).encoded()).contains("more"))
    }

    @Test func listReplyShape() throws {
        let reply = try standardState(seq: 5).answer(.list)
        let data = reply.encoded()
        let rows = SeedList.standard.enumerated().map {
            #"{"index":\#($0.offset),"name":"\#($0.element.name)","visited":\#($0.element.visited)}"#
        }
        #expect(text(data) == #"{"countries":[\#(rows.joined(separator: ","))],"ok":true,"seq":5}"#)
        let object = jsonObject(data)
        #expect(Set(object.keys) == ["ok", "seq", "countries"])
        #expect(object["ok"] as? Bool == true)
        #expect(object["seq"] as? Int == 5)
        let countries = object["countries"] as? [[String: Any]]
        #expect(countries?.count == 8)
        #expect(countries?.first?["name"] as? String == "United States")
        #expect(countries?.first?["visited"] as? Bool == true)
        #expect(countries?.last?["index"] as? Int == 7)
        #expect(try Reply.decode(data) == reply)
    }

    /// `watch --json`'s line: a list reply's members without `ok`; a name that looks like JSON
    /// stays inside its string.
    @Test func snapshotShapeIsTheListWithoutOk() throws {
        let state = standardState(seq: 5)
        let rows = SeedList.standard.enumerated().map {
            #"{"index":\#($0.offset),"name":"\#($0.element.name)","visited":\#($0.element.visited)}"#
        }
        #expect(
            text(state.snapshotJSON(store: nil))
                == #"{"countries":[\#(rows.joined(separator: ","))],"seq":5}"#)
        let withStore = jsonObject(state.snapshotJSON(store: "s-1"))
        #expect(Set(withStore.keys) == ["countries", "seq", "store"])
        #expect(withStore["store"] as? String == "s-1")
        let odd = CountriesState(countries: [Country(name: #""ok":true,"x"#, visited: true)], seq: 1)
        let object = jsonObject(odd.snapshotJSON(store: nil))
        #expect((object["countries"] as? [[String: Any]])?.first?["name"] as? String == #""ok":true,"x"#)
    }

    @Test func changeReplyShapes() throws {
        var state = standardState(seq: 1)
        let toggled = try state.apply(.toggle(.index(2)), seed: SeedList.standard).reply
        #expect(
            text(toggled.encoded())
                == #"{"country":{"index":2,"name":"France","visited":true},"ok":true,"seq":2}"#)
        #expect(try Reply.decode(toggled.encoded()) == toggled)
        let count = try state.answer(.count)
        #expect(text(count.encoded()) == #"{"count":8,"ok":true,"seq":2}"#)
        #expect(try Reply.decode(count.encoded()) == count)
        let reset = try state.apply(.reset, seed: [Country(name: "Japan")]).reply
        #expect(
            text(reset.encoded())
                == #"{"countries":[{"index":0,"name":"Japan","visited":false}],"ok":true,"seq":3}"#)
    }

    @Test func historyAndStatusReplyRoundTrip() throws {
        var reply = Reply(
            seq: 3,
            events: [
                Event(seq: 2, kind: .changed(.init(index: 0, name: "A", visited: true))),
                Event(seq: 3, kind: .reset([.init(index: 0, name: "B", visited: false)])),
            ])
        let object = jsonObject(reply.encoded())
        let events = object["events"] as? [[String: Any]]
        #expect(events?.map { $0["topic"] as? String } == ["country.changed", "countries.reset"])
        #expect(try Reply.decode(reply.encoded()) == reply)

        reply = Reply(seq: 9, count: 8)
        reply.store = "0123456789abcdef0123456789abcdef"
        var service = ServiceStatus()
        service.version = "1.0.0"
        service.uptimeMilliseconds = 1_500
        service.visited = 2
        service.commandsServed = 10
        service.commandsRefused = 1
        service.storePath = "/var/lib/countries.db"
        service.storeBytes = 4096
        service.historyFrom = 0
        service.endpoints = ["tcp://127.0.0.1:5555", "tcp://127.0.0.1:5556"]
        reply.status = service
        let status = jsonObject(reply.encoded())
        #expect(
            Set(status.keys) == [
                "ok", "seq", "count", "version", "uptime_seconds", "visited", "commands_served",
                "commands_refused",
                "store", "store_path", "store_bytes", "history_from", "endpoints",
            ])
        #expect(status["store_path"] as? String == "/var/lib/countries.db")
        #expect(status["uptime_seconds"] as? Double == 1.5)
        #expect(try Reply.decode(reply.encoded()) == reply)
    }

    /// A success must carry `seq` and its op's own field: without them it answers nothing
    /// (`countries count` printed 0 for `{"ok":true}`).
    @Test func aSuccessLackingItsOpsFieldIsNoAnswer() {
        let row = IndexedCountry(index: 2, name: "France", visited: true)
        let toggle = Command.change(.toggle(.index(2)))
        #expect(Reply(seq: 3, country: row).missingField(answering: toggle) == nil)
        #expect(Reply(seq: 3).missingField(answering: toggle) == "country")
        #expect(Reply(seq: 3, count: 8).missingField(answering: toggle) == "country")
        var noSeq = Reply(seq: 3, country: row)
        noSeq.seq = nil
        #expect(noSeq.missingField(answering: toggle) == "seq")
        #expect(Reply(seq: 3).missingField(answering: .query(.count)) == "count")
        #expect(Reply(seq: 3, count: 0).missingField(answering: .query(.count)) == nil)
        #expect(Reply(seq: 3).missingField(answering: .query(.list)) == "countries")
        #expect(Reply(seq: 3, countries: []).missingField(answering: .change(.reset)) == nil)
        #expect(Reply(seq: 3).missingField(answering: .history(since: 0)) == "events")
        #expect(Reply(seq: 3).missingField(answering: .status) == nil)
        let refusal = Reply(error: CountriesError(.notFound, "no such country"))
        #expect(refusal.missingField(answering: toggle) == nil, "a refusal carries its error only")
    }

    /// A success that contradicts what was asked answers nothing either: an audit's peer had
    /// `toggle France` print `Italy: visited` and exit 0. Each row is a request, a reply the
    /// service could have sent it, and one it could not have.
    @Test(arguments: [
        (Request(command: .change(.toggle(.name("france")))), "France", 2, true, "Italy", 3),
        (Request(command: .change(.toggle(.index(2)))), "France", 2, true, "France", 3),
        (Request(command: .query(.get(.index(2)))), "France", 2, false, "Spain", 1),
        (Request(command: .change(.remove(.name(" FRANCE ")))), "France", 2, true, "Peru", 2),
    ])
    func aSuccessAboutAnotherRowIsNoAnswer(
        request: Request, name: String, index: Int, visited: Bool, otherName: String,
        otherIndex: Int
    ) {
        let right = Reply(seq: 4, country: IndexedCountry(index: index, name: name, visited: visited))
        #expect(right.contradiction(answering: request) == nil)
        let wrong = Reply(
            seq: 4, country: IndexedCountry(index: otherIndex, name: otherName, visited: visited))
        #expect(wrong.contradiction(answering: request)?.hasPrefix("is about \"\(otherName)\"") == true)
    }

    @Test func aSuccessThatContradictsSetAddIfSeqOrIfStoreIsNoAnswer() {
        let france = IndexedCountry(index: 2, name: "France", visited: true)
        let set = Request(command: .change(.set(.index(2), visited: true, ifSeq: 7)))
        #expect(Reply(seq: 8, country: france).contradiction(answering: set) == nil)
        #expect(
            Reply(seq: 7, country: france).contradiction(answering: set) == nil, "a set that changed nothing")
        #expect(Reply(seq: 9, country: france).contradiction(answering: set) != nil)
        var unvisited = france
        unvisited.visited = false
        #expect(
            Reply(seq: 8, country: unvisited).contradiction(answering: set)?.contains("not visited") == true)

        let toggle = Request(command: .change(.toggle(.index(2), ifSeq: 7)), ifStore: "s1")
        var sameStore = Reply(seq: 8, country: france)
        sameStore.store = "s1"
        #expect(sameStore.contradiction(answering: toggle) == nil)
        var atSeven = sameStore
        atSeven.seq = 7
        #expect(atSeven.contradiction(answering: toggle)?.contains("if_seq 7 rules out") == true)
        var otherStore = sameStore
        otherStore.store = "s2"
        #expect(otherStore.contradiction(answering: toggle) == "names store s2, not s1 as if_store asked")

        let add = Request(command: .change(.add(name: "Japan", visited: true)))
        let japan = IndexedCountry(index: 8, name: "Japan", visited: true)
        #expect(Reply(seq: 5, country: japan).contradiction(answering: add) == nil)
        #expect(Reply(seq: 5, country: france).contradiction(answering: add) != nil)
        // What the peer names reaches a terminal escaped.
        let hostile = IndexedCountry(index: 2, name: "Evil\u{1B}]0;PWNED\u{07}", visited: true)
        let said = Reply(seq: 8, country: hostile).contradiction(answering: add) ?? ""
        #expect(!said.contains("\u{1B}") && said.contains("\\u{1B}"), "\(said.debugDescription)")
        // A refusal is what it says, whatever it names, when it says it in the protocol's terms.
        #expect(Reply(error: CountriesError(.conflict, "no")).contradiction(answering: toggle) == nil)
        var bare = Reply(error: CountriesError(.conflict, "no"))
        bare.error = nil
        #expect(bare.contradiction(answering: toggle) == "refuses without an error code the protocol knows")
        bare.error = .init(code: "weird_new_code", message: "?")
        #expect(bare.contradiction(answering: toggle) != nil)
        #expect(Reply(seq: 8).contradiction(answering: toggle) == "says ok but has no \"country\"")
    }

    @Test func decodeRejectsWhatIsNotAReply() {
        #expect(throws: (any Error).self) { try Reply.decode(Data("nope".utf8)) }
        #expect(throws: (any Error).self) { try Reply.decode(Data("{}".utf8)) }
        #expect(throws: (any Error).self) { try Reply.decode(Data(#"{"ok":"yes"}"#.utf8)) }
    }
}

@Suite struct EventWireTests {
    private static let row = IndexedCountry(index: 3, name: "Côte d’Ivoire", visited: true)

    @Test(arguments: [
        (Event.Kind.changed(row), "country.changed"), (.added(row), "country.added"),
        (.removed(row), "country.removed"),
    ])
    func singleRowEvents(kind: Event.Kind, topic: String) throws {
        let event = Event(seq: 42, kind: kind)
        #expect(event.topic.rawValue == topic)
        #expect(event.country == Self.row)
        let data = event.encoded()
        #expect(
            text(data)
                == #"{"country":{"index":3,"name":"Côte d’Ivoire","visited":true},"seq":42,"topic":"\#(topic)"}"#
        )
        let object = jsonObject(data)
        #expect(Set(object.keys) == ["topic", "seq", "country"])
        #expect(object["topic"] as? String == topic)
        #expect(object["seq"] as? Int == 42)
        let country = object["country"] as? [String: Any]
        #expect(Set(country?.keys ?? [:].keys) == ["index", "name", "visited"])
        #expect(country?["index"] as? Int == 3)
        #expect(country?["name"] as? String == "Côte d’Ivoire")
        #expect(country?["visited"] as? Bool == true)
        #expect(try Event.decode(data) == event)
    }

    @Test func resetEvent() throws {
        let rows = [
            IndexedCountry(index: 0, name: "A", visited: false), .init(index: 1, name: "B", visited: true),
        ]
        let event = Event(seq: UInt64(Int64.max), kind: .reset(rows))
        #expect(event.topic == .countriesReset)
        #expect(event.country == nil)
        let data = event.encoded()
        #expect(
            text(data)
                == #"{"countries":[{"index":0,"name":"A","visited":false},{"index":1,"name":"B","visited":true}],"seq":9223372036854775807,"topic":"countries.reset"}"#
        )
        #expect(Set(jsonObject(data).keys) == ["topic", "seq", "countries"])
        #expect(try Event.decode(data) == event)
        #expect(
            try Event.decode(Event(seq: 1, kind: .reset([])).encoded()) == Event(seq: 1, kind: .reset([])))
    }

    @Test(arguments: [
        #"{"topic":"heartbeat","seq":1}"#, #"{"topic":"country.changed","seq":1}"#,
        #"{"topic":"countries.reset","seq":1,"country":{"index":0,"name":"A","visited":true}}"#,
        #"{"topic":"country.moved","seq":1,"country":{"index":0,"name":"A","visited":true}}"#,
        #"{"seq":1,"country":{"index":0,"name":"A","visited":true}}"#,
        #"{"topic":"country.added","seq":-1,"country":{"index":0,"name":"A","visited":true}}"#,
        #"{"topic":"country.added","country":{"index":0,"name":"A","visited":true}}"#,
        #"{"topic":"country.added","seq":1,"country":{"index":0,"name":"A"}}"#, "[]", "",
    ])
    func decodeRejectsMalformedEvents(json: String) {
        #expect(throws: (any Error).self) { try Event.decode(Data(json.utf8)) }
    }

    @Test func topics() {
        #expect(
            Topic.allCases.map(\.rawValue) == [
                "country.changed", "country.added", "country.removed", "countries.reset", "heartbeat",
            ])
    }

    @Test func heartbeat() throws {
        let beat = Heartbeat(seq: 12)
        #expect(text(beat.encoded()) == #"{"seq":12,"topic":"heartbeat"}"#)
        #expect(try Heartbeat.decode(beat.encoded()) == beat)
        #expect(throws: (any Error).self) { try Heartbeat.decode(Data(#"{"seq":12}"#.utf8)) }
    }

    /// Stores keep seqs as signed 64-bit integers: a larger one is forged, and at `UInt64.max`
    /// a subscriber's `seq + 1` would overflow (a relay forwards a heartbeat of the right shape).
    @Test func seqsPastTheLargestAStoreKeepsAreRefused() throws {
        let largest = "\(Int64.max)"
        #expect(
            try Heartbeat.decode(Data(#"{"seq":\#(largest),"topic":"heartbeat"}"#.utf8)).seq
                == UInt64(Int64.max))
        for seq in ["\(UInt64(Int64.max) + 1)", "\(UInt64.max)"] {
            #expect(throws: (any Error).self) {
                try Heartbeat.decode(Data(#"{"seq":\#(seq),"topic":"heartbeat"}"#.utf8))
            }
            #expect(throws: (any Error).self) {
                try Event.decode(
                    Data(
                        #"{"topic":"country.changed","seq":\#(seq),"country":{"index":0,"name":"A","visited":true}}"#
                            .utf8))
            }
            #expect(throws: (any Error).self) { try Reply.decode(Data(#"{"ok":true,"seq":\#(seq)}"#.utf8)) }
        }
    }
}
