import CountriesCore
import CountriesWeb
import Testing

/// The page model's rules: what every page gets for each change, and what a (re)connecting page
/// gets for its `Last-Event-ID`.
@Suite struct WebPageModelTests {
    let rows = [
        IndexedCountry(index: 0, name: "France", visited: false),
        IndexedCountry(index: 1, name: "Japan", visited: true),
    ]

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func state(_ seq: UInt64, franceVisited: Bool = false) -> CountriesState {
        var rows = rows
        rows[0].visited = franceVisited
        return CountriesState(rows: rows, seq: seq)
    }

    func toggle(_ seq: UInt64, visited: Bool) -> Event {
        Event(seq: seq, kind: .changed(IndexedCountry(index: 0, name: "France", visited: visited)))
    }

    @Test func firstSnapshotThenStateLive() {
        var model = WebPageModel()
        let out = text(model.update(replica: state(4), phase: .live, applied: []))
        #expect(
            out == """
                id: 4
                event: snapshot
                data: {"seq":4,"countries":[{"index":0,"name":"France","visited":false},\
                {"index":1,"name":"Japan","visited":true}]}

                event: state
                data: {"live":true,"line":"live"}


                """)
    }

    /// Seqs mean something only within one store: another store at the same seq (the service
    /// restarted on a new one) is a snapshot for every page, and every snapshot and state event
    /// names its store, so a page that resumed by `Last-Event-ID` onto another store can tell.
    @Test func anotherStoreAtTheSameSeqIsASnapshotAndEveryStateNamesTheStore() {
        var model = WebPageModel()
        _ = model.update(replica: state(3), store: "a", phase: .live, applied: [])
        let resumed = text(model.opened(lastEventID: "3").flatMap { $0 })
        #expect(!resumed.contains("snapshot"))
        #expect(resumed.contains(#"data: {"live":true,"line":"live","store":"a"}"#))

        let other = text(model.update(replica: state(3), store: "b", phase: .live, applied: []))
        #expect(other.contains(#"event: snapshot\#ndata: {"seq":3,"store":"b","countries":"#), "\(other)")
        #expect(other.contains(#""store":"b"}"#))
        // Even a toggle that would fit one by one is a snapshot when it comes from another store.
        let toggled = text(
            model.update(
                replica: state(4, franceVisited: true), store: "c", phase: .live,
                applied: [toggle(4, visited: true)]))
        #expect(toggled.contains("event: snapshot") && !toggled.contains("event: change"))
    }

    @Test func aToggleIsOneChangeEventWithTheSeqAsID() {
        var model = WebPageModel()
        _ = model.update(replica: state(4), phase: .live, applied: [])
        let out = text(
            model.update(
                replica: state(5, franceVisited: true), phase: .live, applied: [toggle(5, visited: true)]))
        #expect(
            out
                == "id: 5\nevent: change\ndata: {\"seq\":5,\"index\":0,\"name\":\"France\",\"visited\":true}\n\n"
        )
    }

    @Test func staleSaysWhyAndIsNotLive() {
        var model = WebPageModel()
        _ = model.update(replica: state(4), phase: .live, applied: [])
        let out = text(model.update(replica: state(4), phase: .stale("no heartbeat for 3 s"), applied: []))
        #expect(out == "event: state\ndata: {\"live\":false,\"line\":\"stale: no heartbeat for 3 s\"}\n\n")
        #expect(model.stateLine == "stale: no heartbeat for 3 s")
    }

    @Test func connectingIsStaleWithNoRows() {
        var model = WebPageModel()
        let out = text(model.opened(lastEventID: nil).flatMap { $0 })
        #expect(!out.contains("snapshot"))
        #expect(out.contains("\"live\":false,\"line\":\"stale: connecting to the service\""))
    }

    @Test func aPageThatResumesGetsOnlyWhatItMissed() {
        var model = WebPageModel()
        _ = model.update(replica: state(4), phase: .live, applied: [])
        _ = model.update(
            replica: state(5, franceVisited: true), phase: .live, applied: [toggle(5, visited: true)])
        _ = model.update(replica: state(6), phase: .live, applied: [toggle(6, visited: false)])
        let out = text(model.opened(lastEventID: "5").flatMap { $0 })
        #expect(!out.contains("snapshot"))
        #expect(!out.contains("id: 5\n"))
        #expect(out.contains("id: 6\nevent: change"))
        #expect(out.hasSuffix("event: state\ndata: {\"live\":true,\"line\":\"live\"}\n\n"))
        let upToDate = text(model.opened(lastEventID: "6").flatMap { $0 })
        #expect(!upToDate.contains("id:"))
    }

    @Test func aPageTooFarBehindOrFromElsewhereGetsASnapshot() {
        var model = WebPageModel(kept: 1)
        _ = model.update(replica: state(4), phase: .live, applied: [])
        _ = model.update(
            replica: state(5, franceVisited: true), phase: .live, applied: [toggle(5, visited: true)])
        _ = model.update(replica: state(6), phase: .live, applied: [toggle(6, visited: false)])
        #expect(text(model.opened(lastEventID: "4").flatMap { $0 }).contains("id: 6\nevent: snapshot"))
        #expect(text(model.opened(lastEventID: "99").flatMap { $0 }).contains("id: 6\nevent: snapshot"))
        #expect(text(model.opened(lastEventID: "junk").flatMap { $0 }).contains("id: 6\nevent: snapshot"))
        #expect(text(model.opened(lastEventID: nil).flatMap { $0 }).contains("id: 6\nevent: snapshot"))
    }

    /// The audit's case: 1,024 kept toggles of a 1,600-byte name were joined into one copy per
    /// resuming page (1.7 MB each, 27 GB at the connection limit). Past the resume budget a page
    /// gets the shared snapshot; within it, the kept messages themselves, not a copy.
    @Test func aResumeIsBoundedInBytesAndSharesTheKeptMessages() {
        let long = String(repeating: "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}", count: 100)
        func longState(_ seq: UInt64, visited: Bool) -> CountriesState {
            CountriesState(rows: [IndexedCountry(index: 0, name: long, visited: visited)], seq: seq)
        }
        var model = WebPageModel(resumeBytes: 16 << 10)
        _ = model.update(replica: longState(1, visited: false), phase: .live, applied: [])
        for seq in UInt64(2)...200 {
            let row = IndexedCountry(index: 0, name: long, visited: seq % 2 == 0)
            _ = model.update(
                replica: longState(seq, visited: seq % 2 == 0), phase: .live,
                applied: [Event(seq: seq, kind: .changed(row))])
        }
        let far = model.opened(lastEventID: "10")
        #expect(text(far.flatMap { $0 }).contains("id: 200\nevent: snapshot"))
        #expect(!text(far.flatMap { $0 }).contains("event: change"))
        #expect(far.map(\.count).reduce(0, +) < 4 << 10)

        let near = model.opened(lastEventID: "195")
        let changes = near.filter { text($0).contains("event: change") }
        #expect(changes.count == 5, "one message per change, as kept")
        #expect(text(changes[0]).hasPrefix("id: 196\nevent: change"))
        #expect(changes.map(\.count).reduce(0, +) <= 16 << 10)
        #expect(!text(near.flatMap { $0 }).contains("snapshot"))
    }

    @Test func addedRemovedAndResetRowsComeAsASnapshot() {
        var model = WebPageModel()
        _ = model.update(replica: state(4), phase: .live, applied: [])
        let grown = CountriesState(
            rows: rows + [IndexedCountry(index: 2, name: "Peru", visited: false)], seq: 5)
        let out = text(
            model.update(
                replica: grown, phase: .live,
                applied: [Event(seq: 5, kind: .added(IndexedCountry(index: 2, name: "Peru", visited: false)))]
            ))
        #expect(out.hasPrefix("id: 5\nevent: snapshot"))
        // Resuming from before the snapshot takes the snapshot, not a gap.
        #expect(text(model.opened(lastEventID: "4").flatMap { $0 }).contains("event: snapshot"))
    }

    @Test func namesAreEscapedInTheJSON() {
        var model = WebPageModel()
        let odd = CountriesState(
            rows: [IndexedCountry(index: 0, name: "A \"B\"\n<C>", visited: false)], seq: 1)
        let out = text(model.update(replica: odd, phase: .live, applied: []))
        #expect(out.contains(#""name":"A \"B\"\n<C>""#))
        #expect(out.split(separator: "\n").filter { $0.hasPrefix("data: ") }.count == 2)
    }

    @Test func listenAddresses() {
        #expect(WebListenAddress("127.0.0.1:8080") == WebListenAddress("localhost:8080"))
        #expect(WebListenAddress("127.0.0.1:8080")?.isLoopback == true)
        #expect(WebListenAddress("[::1]:80")?.isLoopback == true)
        #expect(WebListenAddress("[::1]:80")?.authority(port: 80) == "[::1]:80")
        #expect(WebListenAddress("0.0.0.0:8080")?.isLoopback == false)
        #expect(WebListenAddress("8080") == nil)
        #expect(WebListenAddress("::1:80") == nil)
        #expect(WebListenAddress("127.0.0.1:70000") == nil)
    }
}
