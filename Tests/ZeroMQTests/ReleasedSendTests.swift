import Foundation
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

/// A send that says when libzmq lets its last frame go: what the service counts a peer's unread
/// replies with.
@Suite("Sends with a release")
struct ReleasedSendTests {
    /// Counts releases from libzmq's threads, and the bytes they let go.
    final class Releases: ReleaseObserver {
        private let counts = Locked((releases: 0, bytes: 0))
        var value: Int { counts.withLock { $0.releases } }
        var bytes: Int { counts.withLock { $0.bytes } }
        func released(_ bytes: Int) { counts.withLock { $0 = ($0.releases + 1, $0.bytes + bytes) } }

        /// Waits (bounded, scaled) until `expected` releases came.
        func wait(for expected: Int) -> Bool { eventually { value == expected } }
    }

    @Test("The frame arrives whole, and is released once written", arguments: Transport.allCases)
    func releasedOnceSent(over transport: Transport) throws {
        let directory = try ScratchDirectory(prefix: "zmqr")
        defer { directory.remove() }
        let context = try Context()
        let (pull, push) = try context.connectedPair(.pull, .push, over: transport, in: directory)
        let releases = Releases()
        let big = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0) }
        #expect(try push.send([frame("head")], then: big, observer: releases))
        #expect(try push.send([], then: Array(frame("alone")), observer: releases))
        let received = try #require(try pull.receive())
        #expect(received == [frame("head"), Data(big)])
        #expect(texts(try pull.receive()) == ["alone"])
        #expect(releases.wait(for: 2))
    }

    @Test("A frame libzmq drops is released too")
    func releasedWhenDropped() throws {
        let context = try Context()
        let router = try context.testSocket(.router)
        try router.bind("inproc://released-dropped")
        let releases = Releases()
        // ROUTER drops a message to a peer it does not know, and says nothing.
        #expect(
            try router.send([frame("nobody")], then: Array(frame("lost")), dontWait: true, observer: releases)
        )
        #expect(releases.wait(for: 1))
    }

    @Test("A frame held for a peer that does not read is not released until it is taken")
    func heldUntilTaken() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull)
        let push = try context.testSocket(.push)
        try pull.setOption(.receiveHighWaterMark, 1)
        try push.setOption(.sendHighWaterMark, 1)
        try pull.bind("inproc://released-held")
        try push.connect("inproc://released-held")
        let releases = Releases()
        #expect(try push.send([], then: Array(frame("one")), dontWait: true, observer: releases))
        sleep(for: .milliseconds(50))
        #expect(releases.value == 0, "still queued for the peer")
        #expect(texts(try pull.receive()) == ["one"])
        #expect(releases.wait(for: 1), "released once the peer took it")
    }

    @Test(
        "An observer is told the size of each frame let go: sent, dropped, or refused",
        arguments: Transport.allCases)
    func observerToldTheBytes(over transport: Transport) throws {
        let directory = try ScratchDirectory(prefix: "zmqo")
        defer { directory.remove() }
        let context = try Context()
        let (pull, push) = try context.connectedPair(.pull, .push, over: transport, in: directory) {
            try $0.setOption(.receiveHighWaterMark, 1)
            try $1.setOption(.sendHighWaterMark, 1)
        }
        let observer = Releases()
        #expect(try push.send([frame("head")], then: [UInt8](repeating: 0, count: 1_000), observer: observer))
        #expect(try pull.receive() == [frame("head"), Data(count: 1_000)])
        #expect(eventually { observer.bytes == 1_000 }, "released once written")
        let router = try context.testSocket(.router)
        try router.bind("inproc://observer-dropped-\(transport)")
        #expect(
            try router.send(
                [frame("nobody")], then: [UInt8](repeating: 0, count: 10), dontWait: true, observer: observer)
        )
        #expect(eventually { observer.bytes == 1_010 }, "released when dropped")
        // Fill the queue until a send is refused: a refused frame is let go at once, with its
        // bytes.
        var refused = false
        for _ in 0..<10_000 where !refused {
            let one = Releases()
            if try !push.send([], then: [UInt8](repeating: 0, count: 7), dontWait: true, observer: one) {
                refused = true
                #expect(
                    one.bytes == 7 && one.value == 1, "a refused frame is released before the send returns")
            }
        }
        #expect(refused)
    }
}
