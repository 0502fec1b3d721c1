import Foundation
import TestSupport
import Testing

@testable import ZeroMQ

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

    @Test("Polling a socket closed after it was polled throws ENOTSOCK too")
    func socketClosedBetweenPolls() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull)
        try pull.bind("inproc://poll-closed-later")
        var poller = Poller()
        poller.add(pull)
        #expect(try poller.poll(timeoutMilliseconds: 0).readyCount == 0)
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
        let rounds = 3000
        let server = try echoedServer(transport, in: directory, context: context, answers: rounds * 2)
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
            let taken = try drain(server)
            outstanding -= taken
            answered += taken
        }
        #expect(timedOut == 0)
        #expect(answered >= rounds - 2)
        while outstanding > 0, try server.receive() != nil { outstanding -= 1 }
    }

    /// A receive that finds nothing queued processes the socket's commands as `ZMQ_EVENTS`
    /// would, so the poller does not ask again before its wait; a message that arrives right
    /// after must still wake it. A peer thread answers each request at once, so answers often
    /// land between the empty receive and the wait, or before it.
    @Test(
        "A socket whose last call found nothing queued is not asked again, and never loses a wake-up",
        arguments: [Transport.inproc, .ipc, .tcp])
    func drainedSocketWakes(_ transport: Transport) throws {
        let directory = try ScratchDirectory()
        let context = try Context()
        let rounds = 3000
        let server = try echoedServer(transport, in: directory, context: context, answers: rounds)
        var poller = Poller()
        let item = poller.add(server)
        var answered = 0
        var polls = 0
        var timedOut = 0
        for round in 0..<rounds {
            try server.send([frame("\(round)")])
            answered += try drain(server)
            // The wait comes right after an empty receive, unless every answer is in.
            guard answered <= round else { continue }
            polls += 1
            guard try poller.poll(timeoutMilliseconds: Int(patience)).isReadable(item) else {
                timedOut += 1
                break
            }
            answered += try drain(server)
        }
        #expect(timedOut == 0)
        #expect(answered == rounds)
        #expect(polls > 0)
        // Only the first wait asks, to learn the socket's ZMQ_FD; any other used since would ask.
        #expect(poller.queriesBeforeWait == 1, "\(poller.queriesBeforeWait) ZMQ_EVENTS in \(polls) polls")
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

    /// A signal that lands while the poller waits (in `poll`, or in libzmq's calls inside
    /// `ZMQ_EVENTS`, which the poller asks of every socket used since its last wait) must come
    /// back as an interruption, as from `zmq_poll`, never as an error: the service's loop would
    /// end "polling failed" on a SIGHUP. Here one thread waits on a socket it keeps using while
    /// another sends it SIGUSR1 (a handler without `SA_RESTART`) thousands of times.
    @Test("A signal during a poll is reported as an interruption, never thrown")
    func signalsInterruptNeverThrow() throws {
        let outcome = Box((polls: 0, interrupted: 0))
        let result = try underSignals { stop in
            let context = try Context()
            let pull = try context.testSocket(.pull)
            let push = try context.testSocket(.push)
            try pull.bind("inproc://poll-signals")
            try push.connect("inproc://poll-signals")
            var poller = Poller()
            let item = poller.add(pull)
            var round = 0
            while !stop.value {
                // Mostly waits (nothing to read), now and then with a message to take.
                round += 1
                if round % 8 == 0 { try push.send([frame("tick")]) }
                let ready = try poller.poll(timeoutMilliseconds: 5)
                outcome.update {
                    $0.polls += 1
                    if ready.isInterrupted { $0.interrupted += 1 }
                }
                if ready.isReadable(item) { _ = try pull.receive(dontWait: true) }
            }
        }
        #expect(result.error == nil, "the poll threw after \(outcome.value.polls) polls")
        #expect(outcome.value.polls > 100)
        #expect(outcome.value.interrupted > 0, "no signal landed in a wait: the test proved nothing")
    }

    /// A bound DEALER whose peer, on a thread of its own, sends back each of the first
    /// `answers` messages it gets at once.
    private func echoedServer(
        _ transport: Transport, in directory: ScratchDirectory, context: Context, answers: Int
    ) throws -> Socket {
        let server = try context.testSocket(.dealer)
        try server.bind(uniqueEndpoint(transport, in: directory))
        let endpoint = try server.lastEndpoint
        let echo = Thread {
            guard let client = try? context.testSocket(.dealer), (try? client.connect(endpoint)) != nil else {
                return
            }
            for _ in 0..<answers {
                guard let message = try? client.receive() else { return }
                _ = try? client.send(message)
            }
            client.close()
        }
        echo.start()
        return server
    }

    /// Receives what is queued without waiting; returns how many messages.
    private func drain(_ socket: Socket) throws -> Int {
        var count = 0
        while try socket.receive(dontWait: true) != nil { count += 1 }
        return count
    }
}
