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
        #expect(ContinuousClock.now - started < .milliseconds(300) * testSlowdown)
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

        defer { first.signal(SIGCONT) }
        try #require(first.pause(), "the first service did not stop")
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

    /// Nothing listening at either endpoint: each is refused at once, and the error names both.
    @Test func nothingListeningAnywhereNamesEveryEndpoint() throws {
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
            return error.code == .refused && endpoints.allSatisfy { error.message.contains($0) }
                && error.message.contains("nothing is listening")
        }
    }

    /// A fake replica answers `unavailable` (the change may or may not have been applied) or
    /// `storage_error` (nothing changed there, say for want of a quorum); the client asks the
    /// next one with the same id.
    @Test(arguments: [CountriesError.Code.unavailable, .storageError])
    func aReplicaThatCannotCommitMovesTheSameIdToTheNextEndpoint(code: CountriesError.Code) throws {
        let fakes = try FakeReplicas("unsure", "sure")
        defer { fakes.remove() }
        let (unsure, sure) = (fakes.first, fakes.second)
        let client = CommandClient(
            context: fakes.context, endpoints: fakes.endpoints, timeout: .seconds(2), tries: 3)
        let answered = playing {
            let unavailable = Reply(error: CountriesError(code, "lost the quorum; retry"))
            _ = unsure.answerOne(with: unavailable)
            _ = sure.answerOne(with: toggled(1))
        }
        // Pinned by hand: the fakes answer only the change, not the `status` that would pin it.
        let reply = try client.send(
            Request(id: "the-same-id", command: .change(.toggle(.index(2))), ifStore: "s"))
        #expect(answered.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)
        #expect(reply.ok && reply.seq == 1)
        #expect(unsure.ids == ["the-same-id"])
        #expect(sure.ids == ["the-same-id"], "the retry went to the next endpoint with the same id")
        #expect(client.preferred == sure.endpoint)
    }

    /// `toggle --command A,B` where B serves another store (another prefix, another file): A
    /// takes the change and never answers; the retry must not apply it to B's store too, and
    /// the client must not say "nothing changed". Before changes were pinned to one store, B
    /// applied it (seq 1) and the client reported B's reply.
    @Test func aRetryNeverAppliesTheChangeToAnotherStore() throws {
        let other = try LiveTestService.start()
        defer { other.stop() }
        let context = try Context()
        let taker = try FakeReplica(context: context, endpoint: other.directory.ipc("taker"))
        let client = CommandClient(
            context: context, endpoints: [taker.endpoint, other.commandEndpoint],
            timeout: .milliseconds(500) * testSlowdown, tries: 3)
        let played = playing {
            var count = Reply(count: 8)
            count.seq = 0
            count.store = "0123456789abcdef0123456789abcdef"
            _ = taker.answerOne(with: count)
            _ = taker.takeOne()
        }
        // The fake's socket is not to be used by two threads: its script ends before it goes.
        defer { _ = played.wait(timeout: .now() + 10.0 * Double(testSlowdown)) }
        #expect {
            _ = try client.send(Request(id: "once", command: .change(.toggle(.index(2)))))
        } throws: { error in
            (error as? ClientError)?.code == .outcomeUnknown
                && (error as? ClientError)?.message.contains("request id once") == true
        }
        #expect(taker.ids == ["", "once"], "a status pinned the store, then the change went to A")
        let list = try other.list()
        #expect(list.seq == 0, "the other store applied the change: \(list)")
    }

    /// A client given a follower first and the writer second (`--command F,W`): the follower's
    /// `status` names the writer's endpoint, and the change goes there, not through the
    /// follower's forwarding hop, pinned to the store the status named.
    @Test func aChangeGoesToTheWriterTheFollowersStatusNames() throws {
        let fakes = try FakeReplicas("follower", "writer")
        defer { fakes.remove() }
        let (follower, writer) = (fakes.first, fakes.second)
        let client = CommandClient(
            context: fakes.context, endpoints: fakes.endpoints, timeout: .seconds(2), tries: 3)
        let answered = playing {
            _ = follower.answerOne(with: statusReply(writer: writer.endpoint, store: "s"))
            _ = writer.answerOne(with: toggled(1))
            _ = writer.answerOne(with: toggled(2))
        }
        #expect(try client.send(Request(id: "one", command: .change(.toggle(.index(2))))).seq == 1)
        #expect(try client.send(Request(id: "two", command: .change(.toggle(.index(2))))).seq == 2)
        #expect(answered.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)
        #expect(follower.ids == [""], "only the status went to the follower")
        #expect(writer.ids == ["one", "two"], "the second change did not ask again")
        #expect(writer.stores == ["s", "s"])
        #expect(client.route.writer == 1 && client.preferred == writer.endpoint)
    }

    /// A client that does not follow the writer (a one-shot command's): the `status` still pins
    /// the store, and the change goes to the endpoint that answered it, which forwards.
    @Test func aClientThatDoesNotFollowTheWriterSendsWhereStatusWasAnswered() throws {
        let fakes = try FakeReplicas("follower", "writer")
        defer { fakes.remove() }
        let (follower, writer) = (fakes.first, fakes.second)
        let client = CommandClient(
            context: fakes.context, endpoints: fakes.endpoints, timeout: .seconds(2), tries: 3,
            followsWriter: false)
        let answered = playing {
            _ = follower.answerOne(with: statusReply(writer: writer.endpoint, store: "s"))
            _ = follower.answerOne(with: toggled(1))
        }
        #expect(try client.send(Request(id: "one", command: .change(.toggle(.index(2))))).seq == 1)
        #expect(answered.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)
        #expect(follower.ids == ["", "one"] && follower.stores == ["s"])
        #expect(writer.ids.isEmpty)
        #expect(client.route.writer == nil, "no route kept")
    }

    /// The writer stops answering: its change moves to the follower with the same id (which
    /// forwards or commits it), and the next change asks `status` again rather than wait out the
    /// dead writer's timeout at every change.
    @Test func aWriterThatStopsAnsweringIsAskedForAgain() throws {
        let fakes = try FakeReplicas("follower", "writer")
        defer { fakes.remove() }
        let (follower, writer) = (fakes.first, fakes.second)
        let client = CommandClient(
            context: fakes.context, endpoints: fakes.endpoints, timeout: .milliseconds(400) * testSlowdown,
            tries: 3)
        let answered = playing {
            _ = follower.answerOne(with: statusReply(writer: writer.endpoint, store: "s"))
            _ = writer.takeOne()
            _ = follower.answerOne(with: toggled(1))
            _ = follower.answerOne(with: statusReply(writer: ServiceStatus.thisReplica, store: "s"))
            _ = follower.answerOne(with: toggled(2))
        }
        #expect(try client.send(Request(id: "one", command: .change(.toggle(.index(2))))).seq == 1)
        #expect(try client.send(Request(id: "two", command: .change(.toggle(.index(2))))).seq == 2)
        #expect(answered.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)
        #expect(writer.ids == ["one"])
        #expect(follower.ids == ["", "one", "", "two"], "asked again after the writer went quiet")
        #expect(client.route.writer == 0)
    }

    /// The audit's case: the first try of a change got no reply, the retry got something that is
    /// not a reply (a proxy's error page). The change may have been applied: the client says
    /// "outcome unknown" with the id (it said "not protocol JSON", exit 69, as if nothing was
    /// sent); and a retry that then brings the change's own reply is the answer.
    @Test func aFrameThatIsNotAReplyLeavesTheChangeUnknownUntilItsOwnReply() throws {
        let directory = try ScratchDirectory(prefix: "fake")
        defer { directory.remove() }
        let context = try Context()
        let only = try FakeReplica(context: context, endpoint: directory.ipc("only"))
        let client = CommandClient(
            context: context, endpoints: [only.endpoint], timeout: .milliseconds(500 * testSlowdown), tries: 2
        )
        let page = Data("<html>502 Bad Gateway</html>".utf8)
        // One script at a time on the fake's socket, each over before the next starts: libzmq
        // sockets are not to be used by two threads (a ROUTER asserted, a send meeting the end
        // of the one before).
        let first = playing {
            _ = only.takeOne()
            _ = only.answerOne(withBody: page)
        }
        #expect {
            _ = try client.send(Request(id: "one", command: .change(.toggle(.index(2)))))
        } throws: { error in
            guard let error = error as? ClientError else { return false }
            return error.code == .outcomeUnknown && error.message.contains("request id one")
                && error.message.contains("is not protocol JSON")
        }

        #expect(first.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)

        let own = Reply(seq: 7, country: IndexedCountry(index: 2, name: "France", visited: true))
        let second = playing {
            _ = only.answerOne(withBody: page)
            _ = only.answerOne(with: own)
        }
        #expect(try client.send(Request(id: "two", command: .change(.toggle(.index(2))))) == own)
        #expect(only.ids == ["one", "one", "two", "two"])

        #expect(second.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)

        // A read answered only so is a bad reply, not "no reply" and not unknown.
        let third = playing {
            _ = only.answerOne(withBody: page)
            _ = only.answerOne(withBody: page)
        }
        #expect {
            _ = try client.send(Request(command: .query(.count)))
        } throws: { error in (error as? ClientError)?.code == .badReply }
        #expect(third.wait(timeout: .now() + 10.0 * Double(testSlowdown)) == .success)
    }

    /// A success without the fields its op must have is no answer either: a read ends as a bad
    /// reply (it printed `0` for `count`), a change as unknown.
    @Test func aSuccessWithoutItsFieldsIsNoAnswer() throws {
        let directory = try ScratchDirectory(prefix: "fake")
        defer { directory.remove() }
        let context = try Context()
        let only = try FakeReplica(context: context, endpoint: directory.ipc("only"))
        let client = CommandClient(
            context: context, endpoints: [only.endpoint], timeout: .milliseconds(500) * testSlowdown, tries: 1
        )
        let bare = Data(#"{"ok":true,"seq":3}"#.utf8)
        let answers = playing {
            _ = only.answerOne(withBody: bare)
            _ = only.answerOne(withBody: bare)
        }
        defer { _ = answers.wait(timeout: .now() + 10.0 * Double(testSlowdown)) }
        #expect {
            _ = try client.send(Request(command: .query(.count)))
        } throws: { error in
            guard let error = error as? ClientError else { return false }
            return error.code == .badReply
                && error.message.hasSuffix(#"has no "count": it is no answer to count"#)
        }
        #expect {
            _ = try client.send(Request(id: "one", command: .change(.toggle(.index(2)))))
        } throws: { error in (error as? ClientError)?.code == .outcomeUnknown }
    }

    /// With one endpoint, `storage_error` is the answer: there is no other replica to ask.
    @Test func aStorageErrorFromTheOnlyEndpointIsTheAnswer() throws {
        let directory = try ScratchDirectory(prefix: "fake")
        defer { directory.remove() }
        let context = try Context()
        let only = try FakeReplica(context: context, endpoint: directory.ipc("only"))
        let client = CommandClient(
            context: context, endpoints: [only.endpoint], timeout: .seconds(2), tries: 3)
        let played = playing {
            _ = only.answerOne(with: Reply(error: CountriesError(.storageError, "disk full")))
        }
        defer { _ = played.wait(timeout: .now() + 10.0 * Double(testSlowdown)) }
        let reply = try client.send(Request(id: "one", command: .change(.toggle(.index(2)))))
        #expect(reply.failure?.code == .storageError)
        #expect(only.ids == ["one"])
    }
}
