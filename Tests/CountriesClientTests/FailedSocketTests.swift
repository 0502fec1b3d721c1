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
    @Test(arguments: [true, false])
    func theCommandClientSaysAChangeMayHaveBeenApplied(changes: Bool) throws {
        let clientContext = try Context()
        // The fake service has a context of its own: the client's is the one that breaks.
        let directory = try ScratchDirectory(prefix: "broken-client")
        let serverContext = try Context()
        let replica = try FakeReplica(context: serverContext, endpoint: directory.ipc("service"))
        defer {
            replica.close()
            serverContext.terminate()
            directory.remove()
        }
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
        if changes {
            #expect(error.code == .outcomeUnknown, "\(error)")
            #expect(error.message.contains("request id one"), "\(error)")
        } else {
            #expect(error.code == .sockets, "\(error)")
        }
        #expect(error.message.contains("reply failed"), "\(error)")
    }

    @Test(arguments: [true, false])
    func pendingRequestsSayAChangeMayHaveBeenApplied(changes: Bool) throws {
        let clientContext = try Context()
        // The fake service has a context of its own: the client's is the one that breaks.
        let directory = try ScratchDirectory(prefix: "broken-pending")
        let serverContext = try Context()
        let replica = try FakeReplica(context: serverContext, endpoint: directory.ipc("service"))
        defer {
            replica.close()
            serverContext.terminate()
            directory.remove()
        }
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
        if changes {
            #expect(error.code == .outcomeUnknown, "\(error)")
            #expect(error.message.contains("request id one"), "\(error)")
        } else {
            #expect(error.code == .sockets, "\(error)")
        }
        #expect(error.message.contains("receiving from"), "\(error)")
    }
}
