import Foundation
import TestSupport
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

    /// The poller asks `ZMQ_EVENTS` only of sockets used since it last asked, or whose
    /// `ZMQ_FD` fired. A send or receive can take the socket's wake-up for a message that
    /// arrived meanwhile; if the poller then trusted its old answer it would wait out the
    /// timeout with a message queued. Here a peer thread answers each request at once (so
    /// replies often land while the server is sending), and no poll may time out.
    @Test(
        "A socket used between polls never loses a wake-up",
        arguments: [Transport.inproc, .ipc, .tcp])
    func noLostWakeUps(_ transport: Transport) throws {
        let directory = try ScratchDirectory()
        let context = try Context()
        let server = try context.testSocket(.dealer)
        try server.bind(uniqueEndpoint(transport, in: directory))
        let endpoint = try server.lastEndpoint
        let rounds = 3000
        let echo = Thread {
            guard let client = try? context.testSocket(.dealer), (try? client.connect(endpoint)) != nil else {
                return
            }
            for _ in 0..<(rounds * 2) {
                guard let message = try? client.receive() else { return }
                _ = try? client.send(message)
            }
            client.close()
        }
        echo.start()
        var poller = Poller()
        let item = poller.add(server)
        var outstanding = 0
        var answered = 0
        var timedOut = 0
        for round in 0..<rounds {
            // Two in flight, so an answer is often on its way while the next is sent.
            while outstanding < 2 {
                try server.send([frame("\(round)")])
                outstanding += 1
            }
            let ready = try poller.poll(timeoutMilliseconds: Int(patience))
            if !ready.isReadable(item) {
                timedOut += 1
                break
            }
            while try server.receive(dontWait: true) != nil {
                outstanding -= 1
                answered += 1
            }
        }
        #expect(timedOut == 0)
        #expect(answered >= rounds - 2)
        while outstanding > 0, try server.receive() != nil { outstanding -= 1 }
    }

    @Test("A socket that was not used since the last poll is still reported when a message arrives")
    func untouchedSocketWakes() throws {
        let context = try Context()
        let quiet = try context.testSocket(.pull)
        let busy = try context.testSocket(.pull)
        let pushQuiet = try context.testSocket(.push)
        let pushBusy = try context.testSocket(.push)
        try quiet.bind("inproc://poll-quiet-item")
        try busy.bind("inproc://poll-busy-item")
        try pushQuiet.connect("inproc://poll-quiet-item")
        try pushBusy.connect("inproc://poll-busy-item")
        var poller = Poller()
        let quietItem = poller.add(quiet)
        let busyItem = poller.add(busy)
        for round in 0..<50 {
            try pushBusy.send([frame("\(round)")])
            let ready = try poller.poll(timeoutMilliseconds: Int(patience))
            #expect(ready.isReadable(busyItem) && !ready.isReadable(quietItem))
            #expect(texts(try busy.receive(dontWait: true)) == ["\(round)"])
        }
        try pushQuiet.send([frame("late")])
        let ready = try poller.poll(timeoutMilliseconds: Int(patience))
        #expect(ready.isReadable(quietItem) && !ready.isReadable(busyItem))
        #expect(texts(try quiet.receive(dontWait: true)) == ["late"])
    }
}
