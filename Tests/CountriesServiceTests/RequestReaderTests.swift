import CountriesCore
import Foundation
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesService

/// The reader against clients on inproc: a batch stops at its count, its `history` requests, its
/// replies' bytes and its requests' bytes, whichever comes first, and the cohort's wait ends when
/// the awaited clients are in or its time is up.
@Suite struct RequestReaderTests {
    private let logger = Logger(level: .error) { _ in }

    /// A ROUTER like the service's, and DEALER clients named `names` (each request goes out
    /// with the empty delimiter a REQ adds, so the envelope is the name and the delimiter).
    private final class Wire {
        let context: Context
        let router: Socket
        var clients: [String: Socket] = [:]

        init(_ names: [String]) throws {
            context = try Context()
            router = try context.makeSocket(.router)
            try router.setOption(.linger, 0)
            let endpoint = "inproc://reader-\(UUID().uuidString)"
            try router.bind(endpoint)
            for name in names {
                let client = try context.makeSocket(.dealer)
                try client.setOption(.linger, 0)
                try client.setOption(.routingID, Data(name.utf8))
                try client.connect(endpoint)
                clients[name] = client
            }
        }

        func send(_ name: String, _ json: String) throws {
            _ = try clients[name]?.send([Data(), Data(json.utf8)])
        }

        /// Waits until the router has a request to read (inproc delivers at once, but the
        /// router learns of a new pipe through its commands).
        func waitReadable() throws {
            var poller = Poller()
            poller.add(router)
            #expect(try poller.poll(timeoutMilliseconds: Int(patienceMilliseconds)).readyCount == 1)
        }

        func close() {
            for client in clients.values { client.close() }
            router.close()
            context.terminate()
        }
    }

    private func reader(_ wire: Wire, _ change: (inout ServiceConfiguration) -> Void) -> RequestReader {
        var configuration = ServiceConfiguration()
        change(&configuration)
        return RequestReader(
            commands: wire.router, configuration: configuration, authenticates: false, logger: logger)
    }

    private func toggle(_ index: Int) -> String { #"{"op":"toggle","name":"France","id":"t-\#(index)"}"# }

    @Test func aBatchStopsAtItsCount() throws {
        let wire = try Wire(["a"])
        defer { wire.close() }
        let reader = reader(wire) { $0.maximumBatch = 4 }
        for index in 0..<6 { try wire.send("a", toggle(index)) }
        try wire.waitReadable()
        var batch: [IncomingRequest] = []
        var load = RequestReader.Load()
        #expect(reader.read(into: &batch, load: &load, traces: false, listBytes: { 0 }))
        #expect(batch.count == 4)
        #expect(batch.map { $0.envelope } == Array(repeating: [Data("a".utf8), Data()], count: 4))
        batch.removeAll()
        // The rest, then an empty queue: not a limit.
        #expect(!reader.read(into: &batch, load: &load, traces: false, listBytes: { 0 }))
        #expect(batch.map { $0.body } == [[Array(toggle(4).utf8)], [Array(toggle(5).utf8)]])
        #expect(load.costly == 0 && load.replyBytes == 0)
        // A limit of one reads one, whatever the batch may hold.
        try wire.send("a", toggle(6))
        try wire.send("a", toggle(7))
        try wire.waitReadable()
        batch.removeAll()
        #expect(reader.read(into: &batch, load: &load, limit: 1, traces: false, listBytes: { 0 }))
        #expect(batch.map { $0.body } == [[Array(toggle(6).utf8)]])
    }

    @Test func aBatchStopsAtItsHistoryRequests() throws {
        let wire = try Wire(["a"])
        defer { wire.close() }
        let reader = reader(wire) { $0.maximumHistoryPerBatch = 2 }
        for since in 0..<3 { try wire.send("a", #"{"op":"history","since":\#(since)}"#) }
        try wire.send("a", toggle(0))
        try wire.waitReadable()
        var batch: [IncomingRequest] = []
        var load = RequestReader.Load()
        #expect(reader.read(into: &batch, load: &load, traces: false, listBytes: { 0 }))
        #expect(batch.count == 2)
        #expect(load.costly == 2)
        #expect(load.replyBytes == 2 * Limits.historyPageBytes)
        // A new batch takes the rest.
        batch.removeAll()
        load = RequestReader.Load()
        #expect(!reader.read(into: &batch, load: &load, traces: false, listBytes: { 0 }))
        #expect(batch.count == 2 && load.costly == 1)
    }

    /// The in-memory loop's pass: one request taken at a time and counted after its answer
    /// (``RequestReader/next(received:)``, ``RequestReader/count(_:in:listBytes:)``) stops at
    /// the same limit a batch does, and an empty queue says so.
    @Test func aPassOfOneAtATimeStopsWhereABatchDoes() throws {
        let wire = try Wire(["a"])
        defer { wire.close() }
        let reader = reader(wire) { $0.maximumHistoryPerBatch = 2 }
        for since in 0..<3 { try wire.send("a", #"{"op":"history","since":\#(since)}"#) }
        try wire.waitReadable()
        var load = RequestReader.Load()
        var taken: [IncomingRequest] = []
        while reader.allowsMore(load), case .request(let request) = reader.next(received: nil) {
            taken.append(request)
            reader.count(request, in: &load, listBytes: { 0 })
        }
        #expect(taken.count == 2 && load.costly == 2)
        #expect(!reader.allowsMore(load))
        guard case .request(let third) = reader.next(received: nil) else {
            Issue.record("the third history request was not left for the next pass")
            return
        }
        #expect(third.body == [Array(#"{"op":"history","since":2}"#.utf8)])
        guard case .empty = reader.next(received: nil) else {
            Issue.record("an empty queue did not say so")
            return
        }
    }

    @Test func aBatchStopsAtItsRepliesBytesAndAsksTheListSizeOnlyForTheList() throws {
        let wire = try Wire(["a"])
        defer { wire.close() }
        let reader = reader(wire) { $0.maximumBatchReplyBytes = 1_000 }
        try wire.send("a", toggle(0))
        for _ in 0..<3 { try wire.send("a", #"{"op":"list"}"#) }
        try wire.waitReadable()
        var asked = 0
        var batch: [IncomingRequest] = []
        var load = RequestReader.Load()
        let full = reader.read(
            into: &batch, load: &load, traces: false,
            listBytes: {
                asked += 1
                return 600
            })
        #expect(full)
        #expect(batch.count == 3)  // the toggle and two lists: 1,200 bytes reach the bound
        #expect(asked == 2)
        #expect(load.replyBytes == 1_200)
    }

    /// However many peers send big requests, a batch holds about its bytes of them: the ones
    /// that reach the bound are taken (one at least), the rest wait for the next batch.
    @Test func aBatchStopsAtItsRequestsBytesAndTakesOneBigRequestAlone() throws {
        let wire = try Wire(["a", "b"])
        defer { wire.close() }
        let reader = reader(wire) { $0.maximumBatchRequestBytes = 100_000 }
        let big = #"{"op":"add","name":""# + String(repeating: "x", count: 60_000) + #""}"#
        try wire.send("a", big)
        try wire.send("b", big)
        try wire.send("a", toggle(0))
        try wire.waitReadable()
        var batch: [IncomingRequest] = []
        var load = RequestReader.Load()
        #expect(reader.read(into: &batch, load: &load, traces: false, listBytes: { 0 }))
        #expect(batch.count == 2, "two big requests pass 100,000 bytes")
        #expect(load.requestBytes == batch.reduce(0) { $0 + $1.bytes } && load.requestBytes > 120_000)
        batch.removeAll()
        load = RequestReader.Load()
        #expect(!reader.read(into: &batch, load: &load, traces: false, listBytes: { 0 }))
        #expect(batch.map(\.body) == [[Array(toggle(0).utf8)]])

        // A bound below one request still takes it: no request waits forever.
        let tiny = self.reader(wire) { $0.maximumBatchRequestBytes = 1 }
        try wire.send("a", big)
        try wire.send("a", toggle(1))
        try wire.waitReadable()
        batch.removeAll()
        load = RequestReader.Load()
        #expect(tiny.read(into: &batch, load: &load, traces: false, listBytes: { 0 }))
        #expect(batch.count == 1 && batch[0].body == [Array(big.utf8)])
    }

    @Test func tracesAreStampedOnlyWhenAsked() throws {
        let wire = try Wire(["a"])
        defer { wire.close() }
        let reader = reader(wire) { _ in }
        try wire.send("a", toggle(0))
        try wire.send("a", toggle(1))
        try wire.waitReadable()
        var batch: [IncomingRequest] = []
        var load = RequestReader.Load()
        let before = ContinuousClock.now
        _ = reader.read(into: &batch, load: &load, limit: 1, traces: true, listBytes: { 0 })
        _ = reader.read(into: &batch, load: &load, limit: 2, traces: false, listBytes: { 0 })
        #expect(batch.count == 2)
        #expect(batch[0].trace.received.map { $0 >= before } == true)
        #expect(batch[1].trace.received == nil)
    }

    @Test func theCohortsWaitEndsWhenTheAwaitedAreInOrItsTimeIsUp() throws {
        let wire = try Wire(["a", "b", "c"])
        defer { wire.close() }
        let reader = reader(wire) { _ in }
        var cohort = CommitCohort()
        cohort.committed(peers: ["a", "b"].map { Data($0.utf8) }, took: .milliseconds(40))
        // `a` is in the batch already; `b` is awaited, at most the longest wait.
        let awaited = try #require(cohort.missing(from: [Data("a".utf8)]))
        #expect(awaited.wait == CommitCohort.longestWait)

        // Someone else's request does not end the wait: it is read, and the wait runs out.
        try wire.send("c", toggle(0))
        try wire.waitReadable()
        var batch: [IncomingRequest] = []
        var load = RequestReader.Load()
        let started = ContinuousClock.now
        reader.gather(awaited, into: &batch, load: &load, traces: false, listBytes: { 0 })
        #expect(ContinuousClock.now - started >= awaited.wait)
        #expect(batch.map { $0.envelope.first } == [Data("c".utf8)])

        // The awaited one already queued: read, and the wait ends at once.
        try wire.send("b", toggle(1))
        try wire.waitReadable()
        batch.removeAll()
        reader.gather(awaited, into: &batch, load: &load, traces: false, listBytes: { 0 })
        #expect(batch.map { $0.envelope.first } == [Data("b".utf8)])
    }
}
