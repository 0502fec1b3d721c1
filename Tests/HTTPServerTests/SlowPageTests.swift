import Foundation
@preconcurrency import Glibc
import HTTPServer
import TestSupport
import Testing

/// A page that stops reading costs its stream's bound and no more, is dropped, and slows neither
/// the writer nor a page that reads (docs/SECURITY.md, `countries web`).
@Suite(.timeLimit(.minutes(3)))
struct SlowPageTests {
    /// A raw TCP connection that sends a GET for the event stream and then reads only when told.
    private final class RawPage {
        let fd: Int32

        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            // A small receive buffer, so the kernel holds little of what the page does not read.
            var small: Int32 = 4_096
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { throw HarnessFailure("connect failed: errno \(errno)") }
            let request = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
            _ = request.withCString { send(fd, $0, strlen($0), 0) }
        }

        /// Everything read so far.
        private(set) var bytes: [UInt8] = []

        /// Reads whatever has arrived (non-blocking); the byte count, 0 at end of stream.
        func drain() -> Int? {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? nil : 0 }
            bytes += buffer[0..<count]
            return count
        }

        deinit { close(fd) }
    }

    @Test func aPageThatStopsReadingIsDroppedAtItsBoundAndTheOthersGetEverything() throws {
        let streams = Box<[EventStream]>([])
        let capacity = 8_192
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: HTTPServer.Limits(streamBuffer: capacity)
        ) { _ in
            .eventStream { stream in streams.update { $0.append(stream) } }
        }
        defer { server.stop() }
        let stalled = try RawPage(port: server.port)
        #expect(eventually(within: .seconds(5)) { streams.value.count == 1 })
        let reader = try RawPage(port: server.port)
        #expect(eventually(within: .seconds(5)) { streams.value.count == 2 })
        let (stalledStream, readingStream) = (streams.value[0], streams.value[1])

        // Up to 20 MB in 1 KiB events: far more than the bound and the kernel's buffers together.
        let event = Array("data: \(String(repeating: "x", count: 1_016))\n\n".utf8)
        var received = 0
        var droppedAfter: Int?
        let started = ContinuousClock.now
        for sent in 1...20_000 {
            if !stalledStream.send(event), droppedAfter == nil { droppedAfter = sent }
            // Enough to see the reading page go on after the drop; the rest only cost time (a
            // loaded sanitizer run took 113 s for all 20,000).
            if let droppedAfter, sent > droppedAfter + 2_000 { break }
            #expect(stalledStream.bufferedBytes <= capacity)
            // The reading page keeps up; its stream is never dropped.
            while !readingStream.send(event) {
                Issue.record("the reading page's stream was dropped at event \(sent)")
                return
            }
            while readingStream.bufferedBytes > capacity / 2 {
                if let count = reader.drain() { received += count } else { usleep(100) }
            }
        }
        let writing = ContinuousClock.now - started
        #expect(droppedAfter != nil, "the stalled page was never dropped")
        #expect(stalledStream.isEnded)
        // The stalled page's response ends (the last chunk) once it reads what was in flight,
        // and its browser reconnects with Last-Event-ID (WebEndToEndTests covers the resume).
        #expect(
            eventually(within: .seconds(5)) {
                while let count = stalled.drain(), count > 0 {}
                return stalled.bytes.suffix(5) == Array("0\r\n\r\n".utf8)
            })
        #expect(stalled.bytes.count < 4 * 1_024 * 1_024, "what a stalled page is sent stays bounded")
        #expect(eventually(within: .seconds(5)) { server.openStreams == 1 })
        print(
            "web: a stalled page was dropped after \(droppedAfter ?? -1) events of 1 KiB (bound \(capacity) B); the reading page took \(received) B meanwhile; events written in \(writing)"
        )
    }
}
