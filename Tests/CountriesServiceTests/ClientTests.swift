import CountriesClient
import CountriesCore
import Foundation
import TestSupport
import Testing
import ZeroMQ

/// The Lazy Pirate CommandClient against a real service, and REQ and DEALER peers side by side.
@Suite struct ClientTests {
    @Test func aPlainREQAndADealerBothWork() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }

        let req = try service.commandSocket(.req)
        #expect(try req.send([Data(#"{"op":"toggle","index":3}"#.utf8)]))
        let reqReply = try #require(try req.receive())
        #expect(reqReply.count == 1, "REQ strips its envelope")
        #expect(try RawReply(reqReply[0]).reply.seq == 1)

        let dealer = try service.commandSocket(.dealer)
        #expect(try dealer.send([Data(), Data(#"{"op":"toggle","index":3}"#.utf8)]))
        let enveloped = try #require(try dealer.receive())
        #expect(enveloped.count == 2 && enveloped[0].isEmpty)
        #expect(try RawReply(enveloped[1]).reply.seq == 2)
        #expect(try dealer.send([Data(#"{"op":"get","index":3}"#.utf8)]))
        let bare = try #require(try dealer.receive())
        #expect(bare.count == 1)
        #expect(try RawReply(bare[0]).reply.country?.visited == false)

        // REQ again, on the same socket: its state machine is intact.
        #expect(try req.send([Data(#"{"op":"count"}"#.utf8)]))
        #expect(try RawReply(try #require(try req.receive())[0]).reply.count == 8)
    }

    @Test func anUnansweringEndpointGivesNoReplyAfterExactlyTriesTries() throws {
        let directory = "/tmp/cst-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try Context()
        // A router that takes every request and answers none (nothing listening at all is
        // reported at once instead: `aServiceNotUpYetIsReportedAtOnceAndReachedOnceUp`).
        let silent = try context.makeSocket(.router)
        try silent.setOption(.linger, 0)
        let endpoint = "ipc://\(directory)/silent"
        try silent.bind(endpoint)
        let tries = 3
        let timeout = Duration.milliseconds(150)
        let client = CommandClient(context: context, endpoint: endpoint, timeout: timeout, tries: tries)
        let started = ContinuousClock.now
        #expect {
            _ = try client.send(.query(.count))
        } throws: { error in
            guard let error = error as? ClientError else { return false }
            return error.code == .noReply && error.message.contains("after 3 tries")
                && error.endpoint.contains("silent")
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= timeout * tries, "each try waits its full timeout: \(elapsed)")
        #expect(elapsed < timeout * tries + .seconds(2) * testSlowdown, "and no more: \(elapsed)")
    }

    @Test func triesAreCountedOnTheWire() throws {
        let directory = "/tmp/cst-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try Context()
        let silent = try context.makeSocket(.router)
        try silent.setOption(.linger, 0)
        try silent.setOption(.receiveTimeout, 100)
        let endpoint = "ipc://\(directory)/silent"
        try silent.bind(endpoint)

        let client = CommandClient(
            context: context, endpoint: endpoint, timeout: .milliseconds(300), tries: 4)
        #expect(throws: ClientError.self) {
            _ = try client.send(Request(id: "same", command: .query(.count)))
        }
        var received: [Data] = []
        while let frames = try silent.receive() {
            received.append(try #require(frames.last))
        }
        #expect(received.count == 4, "one request per try")
        #expect(Set(received).count == 1, "every try sends the same bytes (same id)")
    }

    @Test func aServiceNotUpYetIsReportedAtOnceAndReachedOnceUp() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        try service.stop()

        // Nothing listens on this host's endpoint: the client says so at once (issue 24), it does
        // not spend 25 tries of 200 ms, and nothing was sent.
        let client = service.client(timeout: .milliseconds(200), tries: 25)
        let started = ContinuousClock.now
        #expect {
            _ = try client.send(.change(.toggle(.name("Russia"))))
        } throws: { error in
            (error as? ClientError)?.message.contains("nothing is listening") == true
        }
        #expect(ContinuousClock.now - started < .seconds(2) * testSlowdown)

        try service.start()
        let reply = try client.send(.change(.toggle(.name("Russia"))))
        #expect(reply.ok && reply.seq == 1, "the change that was refused was never applied")
        #expect(reply.country == IndexedCountry(index: 5, name: "Russia", visited: true))
    }

    @Test func aRetriedToggleWhoseFirstReplyWasLostIsAppliedOnce() throws {
        let service = try ServiceHarness()
        defer { service.shutdown() }
        let events = try service.subscriber()

        let request = Request(id: freshID(), command: .change(.toggle(.name("Moldova"))))
        // The first try: sent, applied, but its reply is never read (the client "timed out").
        let lost = try service.commandSocket(.req)
        #expect(try lost.send([request.encoded()]))
        let applied = try #require(try nextEvent(events), "the first try is applied")
        #expect(try applied.event().seq == 1)
        lost.close()

        // The retry, from the CommandClient with the same id.
        let reply = try service.client().send(request)
        #expect(reply.seq == 1)
        #expect(reply.country == IndexedCountry(index: 6, name: "Moldova", visited: true))
        let state = try service.snapshot()
        #expect(state.seq == 1)
        #expect(state.countries[6].visited)
        #expect(try nextEvent(events, within: .milliseconds(300)) == nil, "no second event")
    }
}
