import CountriesClient
import CountriesCore
import Foundation
import TestSupport
import Testing
import ZeroMQ

/// Runs `requests` like an event loop would until `count` outcomes have arrived or `limit` (times
/// ``testSlowdown``) passed; `extra` adds sockets of the test's own (a fake server) and handles
/// them.
private func collect<Tag>(
    _ count: Int, from requests: PendingRequests<Tag>, upTo limit: Duration = .seconds(10),
    extra: (inout Poller) -> Int? = { _ in nil }, onExtra: () throws -> Void = {}
) throws -> [PendingRequests<Tag>.Outcome] {
    var outcomes: [PendingRequests<Tag>.Outcome] = []
    let deadline = ContinuousClock.now + limit * testSlowdown
    while outcomes.count < count, ContinuousClock.now < deadline {
        var poller = Poller()
        let index = requests.register(in: &poller)
        let extraIndex = extra(&poller)
        let now = ContinuousClock.now
        let soonest = min(requests.nextDeadline ?? deadline, deadline)
        let wait = min(100, max(0, Int((soonest - now) / .milliseconds(1)) + 1))
        let ready = try poller.poll(timeoutMilliseconds: wait)
        if let extraIndex, ready.isReadable(extraIndex) { try onExtra() }
        if let index, ready.isReadable(index) { outcomes += requests.receive(now: .now) }
        outcomes += requests.tick(now: .now)
    }
    return outcomes
}

@Suite("PendingRequests over real sockets", .serialized)
struct PendingRequestsTests {
    @Test("a reply arrives")
    func replyArrives() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let context = try Context()
        let requests = PendingRequests<String>(context: context, endpoint: service.commandEndpoint)
        #expect(requests.send(Request(command: .query(.list)), tag: "list", now: .now).isEmpty)
        #expect(!requests.isIdle)
        let outcomes = try collect(1, from: requests)
        guard outcomes.count == 1, case .replied(let tag, let reply) = outcomes[0] else {
            Issue.record("expected one reply, got \(outcomes)")
            return
        }
        #expect(tag == "list")
        #expect(reply.ok)
        #expect(reply.countries?.count == 8)
        #expect(requests.isIdle)
    }

    @Test("an unreachable endpoint fails after every try with no_reply")
    func unreachableFailsAfterTries() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pending-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = try Context()
        let requests = PendingRequests<Int>(
            context: context, endpoint: "ipc://\(directory.path)/nobody", timeout: .milliseconds(100),
            tries: 3)
        let started = ContinuousClock.now
        _ = requests.send(Request(command: .query(.count)), tag: 7, now: started)
        let outcomes = try collect(1, from: requests)
        let elapsed = ContinuousClock.now - started
        guard outcomes.count == 1, case .failed(let tag, let error) = outcomes[0] else {
            Issue.record("expected one failure, got \(outcomes)")
            return
        }
        #expect(tag == 7)
        #expect(error.code == .noReply)
        #expect(error.message.contains("3 tries"))
        // Three tries of 100 ms each, not one.
        #expect(elapsed >= .milliseconds(300))
        #expect(requests.isIdle)
        #expect(requests.nextDeadline == nil)
    }

    @Test("queued requests are answered in the order they were sent")
    func answeredInOrder() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let context = try Context()
        let requests = PendingRequests<Int>(context: context, endpoint: service.commandEndpoint)
        let now = ContinuousClock.now
        for index in 0..<8 {
            let command: Command =
                index % 2 == 0 ? .query(.get(.index(index))) : .change(.toggle(.index(index)))
            _ = requests.send(Request(id: RequestID.make(), command: command), tag: index, now: now)
        }
        let outcomes = try collect(8, from: requests)
        var tags: [Int] = []
        for outcome in outcomes {
            guard case .replied(let tag, let reply) = outcome else {
                Issue.record("expected a reply, got \(outcome)")
                continue
            }
            tags.append(tag)
            #expect(reply.ok)
            #expect(reply.country?.index == tag)
        }
        #expect(tags == Array(0..<8))
        // Four toggles, one event each, applied in the order sent.
        let list = try service.list()
        #expect(list.seq == 4)
        #expect(list.countries?.map(\.visited) == [true, true, false, true, false, true, false, true])
    }

    @Test("a retry resends the same bytes with the same id, and the service applies it once")
    func retryReusesTheRequest() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let context = try Context()
        // A fake front for the service that loses the first reply: it forwards every request
        // to the service but answers only from the second try on.
        let front = try context.makeSocket(.router)
        try front.setOption(.linger, 0)
        let frontEndpoint = service.commandEndpoint + "-front"
        try front.bind(frontEndpoint)
        let upstream = CommandClient(
            context: context, endpoint: service.commandEndpoint, timeout: .seconds(2), tries: 1)
        var bodies: [Data] = []
        var forwardedSeqs: [UInt64?] = []

        let requests = PendingRequests<String>(
            context: context, endpoint: frontEndpoint, timeout: .milliseconds(300), tries: 3)
        let request = Request(
            id: "retry-once-\(UUID().uuidString.prefix(8))", command: .change(.toggle(.name("France"))))
        _ = requests.send(request, tag: "France", now: .now)
        let outcomes = try collect(
            1, from: requests, extra: { poller in poller.add(front) },
            onExtra: {
                while let frames = try front.receive(dontWait: true) {
                    guard frames.count == 3 else { continue }
                    let body = frames[2]
                    bodies.append(body)
                    let reply = try upstream.send(Request.decode(body))
                    forwardedSeqs.append(reply.seq)
                    if bodies.count >= 2 {
                        _ = try front.send([frames[0], Data(), reply.encoded()])
                    }
                }
            })

        guard outcomes.count == 1, case .replied(_, let reply) = outcomes[0] else {
            Issue.record("expected one reply, got \(outcomes)")
            return
        }
        #expect(bodies.count == 2)
        #expect(bodies.count == 2 && bodies[0] == bodies[1])
        #expect(bodies.first == request.encoded())
        // The retry got the first reply again: the same seq, not a second toggle.
        #expect(forwardedSeqs == [1, 1])
        #expect(reply.ok)
        #expect(reply.seq == 1)
        #expect(reply.country?.visited == true)
        let list = try service.list()
        #expect(list.seq == 1)
        #expect(list.countries?.first { $0.name == "France" }?.visited == true)
    }
}

/// ``PendingRequests`` over replicas (`select` and `web` given `--command F,W`): changes go to
/// the endpoint `status` names as the elected writer; the `status` is the requester's own and
/// is never reported (docs/PROTOCOL.md, "Clients of replicas").
@Suite("PendingRequests over replicas", .serialized)
struct PendingRequestsWriterRouteTests {
    @Test func aChangeGoesToTheWriterTheFollowersStatusNames() throws {
        let fakes = try FakeReplicas("follower", "writer")
        defer { fakes.remove() }
        let (follower, writer) = (fakes.first, fakes.second)
        let requests = PendingRequests<Int>(
            context: fakes.context, endpoints: fakes.endpoints, timeout: .seconds(2), tries: 3)
        let answered = playing {
            _ = follower.answerOne(with: statusReply(writer: writer.endpoint, store: "s"))
            _ = writer.answerOne(with: toggled(1))
            _ = writer.answerOne(with: toggled(2))
        }
        for (tag, id) in [(1, "one"), (2, "two")] {
            let request = Request(id: id, command: .change(.toggle(.index(2))), ifStore: "s")
            #expect(requests.send(request, tag: tag, now: .now).isEmpty)
        }
        let outcomes = try collect(2, from: requests)
        #expect(answered.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)
        let seqs = outcomes.map { outcome -> String in
            guard case .replied(let tag, let reply) = outcome else { return "\(outcome)" }
            return "\(tag): \(reply.seq.map(String.init) ?? "-")"
        }
        #expect(seqs == ["1: 1", "2: 2"], "only the changes are reported, in order")
        #expect(follower.ids == [""], "only the status went to the follower")
        #expect(writer.ids == ["one", "two"])
        #expect(requests.route.writer == 1 && requests.endpoint == writer.endpoint)
    }

    /// The first endpoint takes the `status` and never answers: the requester's own `status`
    /// moves on like any read, and the change waits for it, then goes to the writer.
    @Test func aStatusWithoutAnAnswerMovesOnAndTheChangeFollows() throws {
        let fakes = try FakeReplicas("silent", "writer")
        defer { fakes.remove() }
        let (silent, writer) = (fakes.first, fakes.second)
        let requests = PendingRequests<Int>(
            context: fakes.context, endpoints: fakes.endpoints, timeout: .milliseconds(300) * testSlowdown,
            tries: 3)
        let answered = playing {
            _ = silent.takeOne()
            _ = writer.answerOne(with: statusReply(writer: ServiceStatus.thisReplica, store: "s"))
            _ = writer.answerOne(with: toggled(7))
        }
        #expect(
            requests.send(Request(id: "one", command: .change(.toggle(.index(2)))), tag: 1, now: .now).isEmpty
        )
        let outcomes = try collect(1, from: requests)
        #expect(answered.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)
        guard outcomes.count == 1, case .replied(1, let reply) = outcomes[0] else {
            Issue.record("expected the change's reply alone, got \(outcomes)")
            return
        }
        #expect(reply.seq == 7)
        #expect(silent.ids == [""])
        #expect(writer.ids == ["", "one"])
        #expect(requests.route.writer == 1)
    }
}

/// ``PendingRequests/abandon(_:)``: what a stopping caller (the web process) tells of the
/// requests still waiting.
@Suite struct AbandonedRequestsTests {
    /// A change sent may have been applied: unknown, with its id; a request never sent was not.
    /// The web process's page said "not toggled" for a toggle the service may have made.
    @Test func aChangeInFlightIsUnknownAndOneQueuedWasNotSent() throws {
        let directory = try ScratchDirectory(prefix: "abandon")
        defer { directory.remove() }
        let context = try Context()
        let only = try FakeReplica(context: context, endpoint: directory.ipc("only"))
        let requests = PendingRequests<Int>(
            context: context, endpoints: [only.endpoint], timeout: .seconds(5) * testSlowdown, tries: 1)
        #expect(
            requests.send(Request(id: "one", command: .change(.toggle(.index(2)))), tag: 1, now: .now).isEmpty
        )
        #expect(requests.send(Request(command: .query(.count)), tag: 2, now: .now).isEmpty)
        #expect(only.takeOne() && only.ids == ["one"], "the change was sent")

        let outcomes = requests.abandon("the web process stopped")
        #expect(requests.isIdle)
        guard outcomes.count == 2, case .failed(1, let change) = outcomes[0],
            case .failed(2, let read) = outcomes[1]
        else {
            Issue.record("expected both to fail, got \(outcomes)")
            return
        }
        #expect(change.code == .outcomeUnknown && change.message.contains("request id one"), "\(change)")
        #expect(change.message.contains("the web process stopped"), "\(change)")
        #expect(change.cause == "the web process stopped", "what a screen shows beside its own advice")
        #expect(
            read.code != .outcomeUnknown && read.message == "not sent: the web process stopped", "\(read)")
        #expect(requests.abandon("again").isEmpty)
    }
}

/// The ids the clients make (`countries toggle`, the `select` picker through ``PendingRequests``)
/// keep the id rule of docs/PROTOCOL.md: at most 64 bytes of printable ASCII.
@Suite struct RequestIDTests {
    @Test func madeIdsFitTheRule() throws {
        for _ in 0..<100 {
            let id = RequestID.make()
            #expect(id.utf8.count <= Limits.maximumRequestIDBytes)
            #expect(id.utf8.allSatisfy { (0x20...0x7E).contains($0) }, "\(id)")
            let request = Request(id: id, command: .change(.toggle(.name("France"))))
            #expect(try Request.decode(request.encoded()) == request)
        }
    }
}
