import CountriesClient
import CountriesCore
import Foundation
import TestSupport
import Testing
import ZeroMQ

/// A request sent whose socket then fails (its context shut down while the reply is awaited):
/// a change may have reached the service, so both clients end it as outcome unknown, never as a
/// plain socket error (docs/PROTOCOL.md, "Outcomes"); a read ends with the socket's error.
@Suite struct FailedSocketTests {
    /// A fake service on a context of its own: the client's is the one that breaks.
    private func fakeService(_ name: String) throws -> (FakeReplica, ScratchDirectory, Context) {
        let directory = try ScratchDirectory(prefix: name)
        let context = try Context()
        return (try FakeReplica(context: context, endpoint: directory.ipc("service")), directory, context)
    }

    private static func stop(_ replica: FakeReplica, _ context: Context, _ directory: ScratchDirectory) {
        replica.close()
        context.terminate()
        directory.remove()
    }

    /// How each client ends the request: a change as unknown, naming its id; a read with the
    /// socket's error.
    private static func expectEnding(_ error: ClientError, changes: Bool, saying words: String) {
        if changes {
            #expect(error.code == .outcomeUnknown, "\(error)")
            #expect(error.message.contains("request id one"), "\(error)")
        } else {
            #expect(error.code == .sockets, "\(error)")
        }
        #expect(error.message.contains(words), "\(error)")
    }

    @Test(arguments: [true, false])
    func theCommandClientSaysAChangeMayHaveBeenApplied(changes: Bool) throws {
        let clientContext = try Context()
        let (replica, directory, serverContext) = try fakeService("broken-client")
        defer { Self.stop(replica, serverContext, directory) }
        let played = playing {
            _ = replica.takeOne()
            clientContext.shutdown()
        }
        let client = CommandClient(
            context: clientContext, endpoint: replica.endpoint, timeout: .seconds(30) * testSlowdown,
            tries: 1)
        let command: Command = changes ? .change(.toggle(.index(1))) : .query(.count)
        let error = #expect(throws: ClientError.self) {
            try client.send(Request(id: "one", command: command))
        }
        #expect(played.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)
        #expect(replica.ids == ["one"], "the request was sent")
        guard let error else { return }
        Self.expectEnding(error, changes: changes, saying: "reply failed")
    }

    @Test(arguments: [true, false])
    func pendingRequestsSayAChangeMayHaveBeenApplied(changes: Bool) throws {
        let clientContext = try Context()
        let (replica, directory, serverContext) = try fakeService("broken-pending")
        defer { Self.stop(replica, serverContext, directory) }
        let requests = PendingRequests<Int>(
            context: clientContext, endpoint: replica.endpoint, timeout: .seconds(30) * testSlowdown,
            tries: 1)
        let command: Command = changes ? .change(.toggle(.index(1))) : .query(.count)
        #expect(requests.send(Request(id: "one", command: command), tag: 1, now: .now).isEmpty)
        #expect(replica.takeOne() && replica.ids == ["one"], "the request was sent")
        clientContext.shutdown()

        let outcomes = requests.receive(now: .now)
        #expect(requests.isIdle)
        guard outcomes.count == 1, case .failed(1, let error) = outcomes[0] else {
            Issue.record("expected the request to fail, got \(outcomes)")
            return
        }
        Self.expectEnding(error, changes: changes, saying: "receiving from")
    }
}
