import CountriesCore
import Foundation
import Testing

/// `history` answers a page at a time (docs/PROTOCOL.md, "Requests"): at most
/// ``Limits/historyPageEvents`` events or about ``Limits/historyPageBytes``, with `"more": true`
/// until the page reaches the current seq.
@Suite struct HistoryPagingTests {
    @Test(arguments: [false, true])
    func pagesCoverEveryEventOnceAndSayWhenThereIsMore(inMemory: Bool) throws {
        let service = try ServiceHarness(inMemory: inMemory)
        defer { service.shutdown() }
        let total = Limits.historyPageEvents * 2 + 7
        try toggle(service, times: total)

        let first = try service.request(.history(since: 0))
        #expect(first.reply.events?.count == Limits.historyPageEvents)
        #expect(first.object["more"] as? Bool == true)
        #expect(first.reply.seq == UInt64(total), "seq is the current one, not the page's last")

        var seqs: [UInt64] = []
        var since: UInt64 = 0
        var pages = 0
        while pages < 10 {
            let page = try service.request(.history(since: since))
            pages += 1
            let events = try #require(page.reply.events)
            seqs += events.map(\.seq)
            guard let last = events.last, page.reply.more == true else {
                #expect(page.object["more"] == nil, "the last page has no `more`")
                break
            }
            since = last.seq
        }
        #expect(pages == 3)
        #expect(seqs == Array(1...UInt64(total)))
    }

    @Test func aBigEventEndsAPageAndTravelsAlone() throws {
        // A reset carries the whole seed list: 2,000 rows are about 130 KB, over a page's bytes.
        let seed = (0..<2_000).map { Country(name: "Place \($0) \(String(repeating: "x", count: 30))") }
        let service = try ServiceHarness(seed: seed, inMemory: true)
        defer { service.shutdown() }
        try toggle(service, times: 10)
        #expect(try service.request(.change(.reset)).reply.ok)
        try toggle(service, times: 10)

        let first = try service.request(.history(since: 0))
        #expect(first.reply.events?.map(\.seq) == Array(1...10), "the page stops before the reset")
        #expect(first.reply.more == true)
        let second = try service.request(.history(since: 10))
        #expect(second.reply.events?.map(\.topic) == [.countriesReset], "over the budget, alone")
        #expect(second.reply.more == true)
        #expect(second.bytes.count > Limits.historyPageBytes)
        let third = try service.request(.history(since: 11))
        #expect(third.reply.events?.map(\.seq) == Array(12...21))
        #expect(third.reply.more == nil)
    }

    private func toggle(_ service: ServiceHarness, times: Int) throws {
        let dealer = try service.commandSocket(.dealer)
        let body = Data(#"{"op":"toggle","index":0}"#.utf8)
        var sent = 0
        var received = 0
        while received < times {
            while sent < times && sent - received < 200 {
                #expect(try dealer.send([Data(), body]))
                sent += 1
            }
            _ = try #require(try dealer.receive(), "reply \(received + 1) of \(times)")
            received += 1
        }
    }
}
