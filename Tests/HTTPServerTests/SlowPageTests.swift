import Foundation
@preconcurrency import Glibc
import HTTPServer
import TestSupport
import Testing

/// A page that stops reading costs its stream's bound and no more, is dropped, and slows neither
/// the writer nor a page that reads (docs/SECURITY.md, `countries web`).
@Suite(.hangGuard())
struct SlowPageTests {
    @Test func aPageThatStopsReadingIsDroppedAtItsBoundAndTheOthersGetEverything() throws {
        let streams = Box<[EventStream]>([])
        let capacity = 8_192
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: HTTPServer.Limits(streamBuffer: capacity)
        ) { _ in
            .eventStream { stream in streams.update { $0.append(stream) } }
        }
        defer { server.stop() }
        let stalled = try RawConnection.page(port: server.port, receiveBuffer: 4_096)
        #expect(eventually(within: .seconds(5)) { streams.value.count == 1 })
        let reader = try RawConnection.page(port: server.port, receiveBuffer: 4_096)
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
            #expect(stalledStream.bufferedBytes <= capacity + event.count)
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
