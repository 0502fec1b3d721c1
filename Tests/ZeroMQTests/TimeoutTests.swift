import Foundation
import Testing
import ZeroMQ

@Suite("Timeouts and non-blocking calls")
struct TimeoutTests {
    @Test("A receive timeout returns nil after roughly the timeout")
    func receiveTimeout() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull, timeout: 100)
        try pull.bind("inproc://quiet")

        let start = Date()
        #expect(try pull.receive() == nil)
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 0.08)
        #expect(elapsed < 1.5)
    }

    @Test("dontWait returns nil or false at once instead of blocking")
    func dontWait() throws {
        let context = try Context()
        let pull = try context.makeSocket(.pull)  // No timeout: only dontWait keeps this from blocking.
        try pull.bind("inproc://nowait")
        #expect(try pull.receive(dontWait: true) == nil)

        // A PUSH with no peer has nowhere to queue the message.
        let push = try context.makeSocket(.push)
        #expect(try push.send([frame("x")], dontWait: true) == false)
    }

    @Test("A send timeout returns false")
    func sendTimeout() throws {
        let context = try Context()
        let push = try context.testSocket(.push, timeout: 50)
        #expect(try push.send([frame("x")]) == false)
    }

    @Test("A full high-water mark makes a non-blocking send return false")
    func highWaterMark() throws {
        let context = try Context()
        let pull = try context.makeSocket(.pull)
        let push = try context.makeSocket(.push)
        try pull.setOption(.receiveHighWaterMark, 1)
        try push.setOption(.sendHighWaterMark, 1)
        try pull.bind("inproc://hwm")
        try push.connect("inproc://hwm")

        var sent = 0
        while sent < 10_000, try push.send([frame("m"), frame("multipart")], dontWait: true) {
            sent += 1
        }
        #expect(sent > 0)
        #expect(sent < 10_000)
        // Every queued message arrives whole: no half message was left behind.
        for _ in 0..<sent {
            #expect(texts(try pull.receive(dontWait: true)) == ["m", "multipart"])
        }
        #expect(try pull.receive(dontWait: true) == nil)
    }
}
