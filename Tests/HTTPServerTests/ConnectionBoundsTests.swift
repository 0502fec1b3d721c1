import Foundation
@preconcurrency import Glibc
import HTTPServer
import TestSupport
import Testing

/// What one client can cost the others (docs/SECURITY.md, "The web page"): a closed page is let
/// go within two watch intervals, headers sent a byte at a time are cut off at the request
/// timeout, one address holds at most its share of connections, an answer that comes later
/// holds no thread, and a message larger than a stream's bound still reaches a page that reads.
@Suite(.hangGuard())
struct ConnectionBoundsTests {
    /// A server whose event streams are kept in `streams`.
    private func streamingServer(_ limits: HTTPServer.Limits, streams: Box<[EventStream]>) throws
        -> HTTPServer
    {
        try HTTPServer(host: "127.0.0.1", port: 0, limits: limits) { request in
            if request.path == "/events" {
                return .eventStream { stream in streams.update { $0.append(stream) } }
            }
            return .text(200, "page")
        }
    }

    /// One whole GET on a fresh connection from `source`: the time to the first byte of its
    /// answer, or nil when the connection was refused or closed without one.
    private func timedGet(port: Int, from source: String = "127.0.0.1") throws -> Duration? {
        let started = ContinuousClock.now
        let client = try RawConnection(port: port, from: source)
        client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let answered = eventually(within: .seconds(5), every: .milliseconds(1)) {
            client.drain()
            return client.text.contains("page") || client.closedByServer
        }
        return answered && client.text.contains("200 OK") ? ContinuousClock.now - started : nil
    }

    @Test func aClosedPageIsLetGoWithinTwoSeconds() throws {
        let streams = Box<[EventStream]>([])
        let server = try streamingServer(HTTPServer.Limits(), streams: streams)
        defer { server.stop() }
        var pages = try (0..<20).map { _ in try RawConnection.page(port: server.port) }
        #expect(eventually { server.openStreams == 20 })
        for stream in streams.value { stream.send(Array("data: x\n\n".utf8)) }
        #expect(eventually { pages.allSatisfy { $0.drain() ?? 0 > 0 || $0.text.contains("data: x") } })
        // Tabs closed: the streams sit suspended with nothing to send, yet are noticed.
        let closed = ContinuousClock.now
        pages.removeAll()
        #expect(
            eventually(within: .seconds(2)) { server.openStreams == 0 }, "\(server.openStreams) still open")
        print("http: 20 closed pages let go after \(ContinuousClock.now - closed)")
    }

    @Test func headersSentAByteAtATimeAreCutOffAndOthersAreServed() throws {
        let streams = Box<[EventStream]>([])
        let server = try streamingServer(
            HTTPServer.Limits(connectionsPerAddress: 0, requestTimeout: .seconds(1)), streams: streams)
        defer { server.stop() }
        let slow = try (0..<40).map { _ in try RawConnection(port: server.port) }
        for client in slow { client.send("GET / HTTP/1.1\r\n") }
        let started = ContinuousClock.now
        var worst = Duration.zero
        // A header line every 100 ms keeps each slow client's connection busy but never whole.
        while ContinuousClock.now - started < .seconds(3) * testSlowdown,
            !slow.allSatisfy({ $0.drain() == 0 || $0.closedByServer })
        {
            for client in slow where !client.closedByServer { client.send("X-Slow: 1\r\n") }
            if let took = try timedGet(port: server.port) {
                worst = max(worst, took)
            } else {
                Issue.record("a whole request got no answer while slow clients trickled")
            }
            usleep(100_000)
        }
        #expect(
            slow.allSatisfy { $0.closedByServer },
            "\(slow.filter { !$0.closedByServer }.count) slow clients kept")
        let cutOff = ContinuousClock.now - started
        #expect(cutOff < .seconds(3) * testSlowdown)
        print(
            "http: 40 slowloris clients cut off after \(cutOff); a whole GET meanwhile took at most \(worst)")
    }

    @Test func oneAddressAtItsLimitDoesNotStopAnother() throws {
        let streams = Box<[EventStream]>([])
        let server = try streamingServer(HTTPServer.Limits(connectionsPerAddress: 8), streams: streams)
        defer { server.stop() }
        let held = try (0..<8).map { _ in try RawConnection.page(port: server.port) }
        #expect(eventually { server.openStreams == 8 })
        let ninth = try timedGet(port: server.port)
        #expect(ninth == nil, "a ninth connection from the same address")
        let other = try timedGet(port: server.port, from: "127.0.0.2")
        #expect(other != nil, "another address was refused")
        print("http: 127.0.0.1 holds its 8; 127.0.0.2 answered in \(other ?? .zero)")
        _ = held
    }

    @Test func anAnswerThatComesLaterHoldsNoThread() throws {
        // Each waiting request by its client's number (the server may take them in any order).
        let waiting = Box<[Int: HTTPResponder]>([:])
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: HTTPServer.Limits(connectionsPerAddress: 0, threads: 1)
        ) { request in
            if request.path == "/later", let number = request.query["n"].flatMap({ Int($0) }) {
                return .later { responder in waiting.update { $0[number] = responder } }
            }
            return .text(200, "page")
        }
        defer { server.stop() }
        let clients = try (0..<100).map { _ in try RawConnection(port: server.port) }
        for (number, client) in clients.enumerated() {
            client.send("GET /later?n=\(number) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        }
        #expect(eventually { waiting.value.count == 100 })
        // One event-loop thread, 100 requests waiting: a fresh request is still answered.
        let fresh = try timedGet(port: server.port)
        #expect(fresh != nil)
        let responders = waiting.value
        let answerer = Thread {
            for (number, responder) in responders where number < 50 {
                responder.respond(.text(200, "later \(number)"))
            }
        }
        answerer.start()
        #expect(
            eventually { clients.prefix(50).allSatisfy { $0.drain() != nil || $0.text.contains("later") } })
        #expect(eventually { clients.prefix(50).allSatisfy { $0.text.contains("200 OK") } })
        // The other 50 are answered by the stop, not left hanging.
        server.stop()
        #expect(eventually { clients.suffix(50).allSatisfy { $0.drain() != nil || $0.text.contains("503") } })
        #expect(clients.suffix(50).allSatisfy { $0.text.contains("503") })
        print("http: 100 later answers waiting on one thread; a fresh GET took \(fresh ?? .zero)")
    }

    @Test func aMessageLargerThanTheBoundReachesAPageThatReads() throws {
        let streams = Box<[EventStream]>([])
        let server = try streamingServer(HTTPServer.Limits(streamBuffer: 8_192), streams: streams)
        defer { server.stop() }
        let page = try RawConnection.page(port: server.port)
        #expect(eventually { streams.value.count == 1 })
        let stream = streams.value[0]
        let snapshot = Array("data: \(String(repeating: "s", count: 1_000_000))\n\n".utf8)
        #expect(stream.send(Array("retry: 1000\n\n".utf8)))
        #expect(stream.send(snapshot), "a snapshot over the bound was refused")
        #expect(stream.send(Array("event: state\ndata: live\n\n".utf8)))
        #expect(
            eventually(within: .seconds(10)) {
                page.drainAll()
                return page.text.contains("data: live")
            })
        #expect(page.bytes.count > snapshot.count)
        #expect(!stream.isEnded)
    }
}
