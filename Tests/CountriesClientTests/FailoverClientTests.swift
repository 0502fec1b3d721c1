import CountriesClient
import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// ``CommandClient`` over several command endpoints (`--command A,B`): a timeout on one moves
/// to the next with the same request id, and the one that answered is tried first next time
/// (docs/PROTOCOL.md, "Replicas").
@Suite struct FailoverClientTests {
    @Test func aDeadEndpointFirstIsPassedOverAndTheLiveOneStaysFirst() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let context = try Context()
        let dead = service.directory.ipc("nobody")
        let client = CommandClient(
            context: context, endpoints: [dead, service.commandEndpoint], timeout: .milliseconds(300),
            tries: 2)
        let reply = try client.send(.query(.count))
        #expect(reply.ok && reply.count == 8)
        #expect(client.preferred == service.commandEndpoint, "the one that answered goes first")
        // Sticky: the next request goes straight to the live one, without waiting out the dead one.
        let started = ContinuousClock.now
        #expect(try client.send(.query(.count)).ok)
        #expect(ContinuousClock.now - started < .milliseconds(300))
    }

    @Test func aStoppedFirstServiceMidWayFailsOverToTheSecond() throws {
        let first = try LiveTestService.start()
        defer { first.stop() }
        let second = try LiveTestService.start()
        defer { second.stop() }
        let context = try Context()
        let client = CommandClient(
            context: context, endpoints: [first.commandEndpoint, second.commandEndpoint],
            timeout: .milliseconds(400), tries: 3)
        #expect(try client.send(.change(.toggle(.index(2)))).seq == 1)
        #expect(client.preferred == first.commandEndpoint)

        first.signal(SIGSTOP)
        defer { first.signal(SIGCONT) }
        let reply = try client.send(.query(.list))
        #expect(reply.ok)
        #expect(reply.countries?[2].visited == false, "the second service answered (its list is untouched)")
        #expect(client.preferred == second.commandEndpoint)
    }

    @Test func everyEndpointGetsATryEvenWithFewerTries() throws {
        let service = try LiveTestService.start()
        defer { service.stop() }
        let context = try Context()
        let dead = [service.directory.ipc("a"), service.directory.ipc("b")]
        let client = CommandClient(
            context: context, endpoints: dead + [service.commandEndpoint], timeout: .milliseconds(200),
            tries: 1)
        #expect(try client.send(.query(.count)).count == 8)
    }

    @Test func noReplyAnywhereNamesEveryEndpoint() throws {
        let directory = try ScratchDirectory(prefix: "fail")
        defer { directory.remove() }
        let context = try Context()
        let endpoints = [directory.ipc("a"), directory.ipc("b")]
        let client = CommandClient(
            context: context, endpoints: endpoints, timeout: .milliseconds(100), tries: 3)
        #expect {
            _ = try client.send(.query(.count))
        } throws: { error in
            guard let error = error as? ClientError else { return false }
            return error.code == .noReply && endpoints.allSatisfy { error.message.contains($0) }
                && error.message.contains("3 tries")
        }
    }

    /// A fake replica answers `unavailable` (the change may or may not have been applied); the
    /// client asks the next one with the same id, as the code says to.
    @Test func unavailableMovesTheSameIdToTheNextEndpoint() throws {
        let directory = try ScratchDirectory(prefix: "fake")
        defer { directory.remove() }
        let context = try Context()
        let unsure = try FakeReplica(context: context, endpoint: directory.ipc("unsure"))
        let sure = try FakeReplica(context: context, endpoint: directory.ipc("sure"))
        let client = CommandClient(
            context: context, endpoints: [unsure.endpoint, sure.endpoint], timeout: .seconds(2), tries: 3)
        let answered = DispatchSemaphore(value: 0)
        let thread = Thread {
            let unavailable = Reply(
                error: CountriesError(.unavailable, "lost the quorum; retry with the same id"))
            _ = unsure.answerOne(with: unavailable)
            _ = sure.answerOne(with: Reply(seq: 1))
            answered.signal()
        }
        thread.start()
        let reply = try client.send(Request(id: "the-same-id", command: .change(.toggle(.index(2)))))
        #expect(answered.wait(timeout: .now() + 10) == .success)
        #expect(reply.ok && reply.seq == 1)
        #expect(unsure.ids == ["the-same-id"])
        #expect(sure.ids == ["the-same-id"], "the retry went to the next endpoint with the same id")
        #expect(client.preferred == sure.endpoint)
    }
}

/// A raw ROUTER standing in for a replica: answers one request with a given reply and records
/// the ids it was sent.
private final class FakeReplica: @unchecked Sendable {
    let endpoint: String
    private let socket: Socket
    private let lock = NSLock()
    private var received: [String] = []

    init(context: Context, endpoint: String) throws {
        self.endpoint = endpoint
        socket = try context.makeSocket(.router)
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, 5_000)
        try socket.bind(endpoint)
    }

    deinit { socket.close() }

    var ids: [String] { lock.withLock { received } }

    /// Waits (at most 5 s) for one request and answers it; false when none came.
    func answerOne(with reply: Reply) -> Bool {
        guard let frames = try? socket.receive(), let body = frames.last,
            let request = try? Request.decode(body)
        else { return false }
        lock.withLock { received.append(request.id ?? "") }
        var out = Array(frames.dropLast())
        out.append(reply.encoded())
        return (try? socket.send(out)) == true
    }
}
