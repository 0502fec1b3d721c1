import Foundation
import Testing
import ZeroMQ

@Suite("Poller")
struct PollerTests {
    @Test("Polls two sockets and a pipe, reporting exactly the ready ones")
    func socketsAndPipe() throws {
        let context = try Context()
        let pullA = try context.testSocket(.pull)
        let pullB = try context.testSocket(.pull)
        let pushB = try context.testSocket(.push)
        try pullA.bind("inproc://poll-a")
        try pullB.bind("inproc://poll-b")
        try pushB.connect("inproc://poll-b")

        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }

        var poller = Poller()
        let a = poller.add(pullA)
        let b = poller.add(pullB, events: .readable)
        let fd = poller.add(fileDescriptor: fds[0])
        #expect(a == 0 && b == 1 && fd == 2)

        let idle = try poller.poll(timeoutMilliseconds: 0)
        #expect(idle.readyCount == 0)
        #expect(!idle.isInterrupted)

        var byte: UInt8 = 42
        #expect(write(fds[1], &byte, 1) == 1)
        let piped = try poller.poll(timeoutMilliseconds: Int(patience))
        #expect(piped.readyCount == 1)
        #expect(piped.isReadable(fd))
        #expect(!piped.isReadable(a) && !piped.isReadable(b))
        #expect(read(fds[0], &byte, 1) == 1)

        try pushB.send([frame("to b")])
        let socketReady = try poller.poll(timeoutMilliseconds: Int(patience))
        #expect(socketReady.readyCount == 1)
        #expect(socketReady.events(at: b) == .readable)
        #expect(socketReady.events(at: a) == [])
        #expect(socketReady.events(at: 99) == [])
        #expect(texts(try pullB.receive(dontWait: true)) == ["to b"])
    }

    @Test("A poll with nothing ready times out with zero ready")
    func timeout() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull)
        try pull.bind("inproc://poll-quiet")
        var poller = Poller()
        poller.add(pull)

        let start = Date()
        let result = try poller.poll(timeoutMilliseconds: 50)
        let elapsed = Date().timeIntervalSince(start)
        #expect(result.readyCount == 0)
        #expect(!result.isReadable(0))
        #expect(elapsed >= 0.04)
        #expect(elapsed < 1.5)
    }

    @Test("Writable is reported for a socket that can send")
    func writable() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull)
        let push = try context.testSocket(.push)
        try pull.bind("inproc://poll-out")
        try push.connect("inproc://poll-out")
        var poller = Poller()
        let index = poller.add(push, events: [.readable, .writable])
        let result = try poller.poll(timeoutMilliseconds: Int(patience))
        #expect(result.events(at: index) == .writable)
    }

    @Test("Polling a socket closed after it was added throws ENOTSOCK")
    func closedSocket() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull)
        var poller = Poller()
        poller.add(pull)
        pull.close()
        #expect(throws: ZMQError(code: ENOTSOCK, operation: "poll(item 0)")) {
            try poller.poll(timeoutMilliseconds: 0)
        }
    }
}
