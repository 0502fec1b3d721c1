import CountriesCore
import Foundation
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesService

/// The forwarder against a stand-in writer (a ROUTER on inproc): requests go out with their
/// bytes unchanged, replies come back unchanged to the client that asked, and a request the
/// writer never answers is answered `unavailable` once its time is up, in the order sent.
@Suite struct ChangeForwarderTests {
    private let logger = Logger(level: .error) { _ in }

    /// A stand-in writer: a ROUTER bound at `endpoint` that waits a moment for each read.
    private static func writer(bound endpoint: String, in context: Context) throws -> Socket {
        let writer = try context.makeSocket(.router)
        try writer.setOption(.linger, 0)
        try writer.setOption(.receiveTimeout, patienceMilliseconds)
        try writer.bind(endpoint)
        return writer
    }

    private func request(_ client: String, _ json: String) -> IncomingRequest {
        IncomingRequest(envelope: [Data(client.utf8), Data()], body: [Array(json.utf8)])
    }

    @Test func repliesComeBackUnchangedAndSilenceIsUnavailable() throws {
        let context = try Context()
        defer { context.terminate() }
        let writer = try Self.writer(bound: "inproc://writer", in: context)
        defer { writer.close() }
        let forwarder = try ChangeForwarder(context: context, security: nil, logger: logger)
        defer { forwarder.close() }
        let start = ContinuousClock.now
        // The first send connects; inproc connects at once.
        let toggles = (0..<3).map { #"{"op":"toggle","name":"France","id":"r-\#($0)"}"# }
        for (index, toggle) in toggles.enumerated() {
            #expect(
                forwarder.forward(
                    request("client-\(index)", toggle), to: "inproc://writer",
                    now: start + .milliseconds(index)))
        }
        #expect(forwarder.hasPending(peer: Data("client-1".utf8)))
        #expect(forwarder.forwarded == 3, "each change sent counts, answered or not")
        var received: [[Data]] = []
        for _ in toggles { received.append(try #require(try writer.receive())) }
        // The writer sees a REQ-like peer: routing id, token, delimiter, the request's bytes.
        #expect(received.map { $0.last } == toggles.map { Data($0.utf8) })
        #expect(received.allSatisfy { ChangeForwarder.isForwarded(Array($0.dropLast())) })
        // It answers the second only.
        let reply = Data(#"{"ok":true,"seq":7}"#.utf8)
        _ = try writer.send(Array(received[1].dropLast()) + [reply])
        var replies: [Outgoing] = []
        #expect(
            eventually {
                replies += forwarder.receiveReplies()
                return !replies.isEmpty
            })
        #expect(replies == [.reply(envelope: [Data("client-1".utf8), Data()], body: Array(reply))])
        #expect(!forwarder.hasPending(peer: Data("client-1".utf8)))
        #expect(forwarder.nextDeadline == start + ChangeForwarder.replyTimeout)
        #expect(forwarder.expire(now: start + .milliseconds(1_000)).isEmpty)
        let expired = forwarder.expire(now: start + ChangeForwarder.replyTimeout + .milliseconds(5))
        #expect(expired.count == 2)
        for (outgoing, client) in zip(expired, ["client-0", "client-2"]) {
            guard case .reply(let envelope, let body) = outgoing else {
                Issue.record("not a reply: \(outgoing)")
                continue
            }
            #expect(envelope == [Data(client.utf8), Data()])
            let error = try Reply.decode(Data(body)).error
            #expect(error?.code == "unavailable" && error?.message.contains("retry with the same id") == true)
        }
        #expect(forwarder.nextDeadline == nil)
    }

    /// A writer's reply is at most the largest reply (``Reply/maximumBytes``). The writer's
    /// endpoint is read from etcd, where anyone who can write names it: a larger frame is
    /// dropped by libzmq with its connection before it is kept, and nothing comes back.
    @Test func aFrameLargerThanAnyReplyIsNotTaken() throws {
        let directory = try ScratchDirectory(prefix: "forwarder")
        defer { directory.remove() }
        let context = try Context()
        defer { context.terminate() }
        let writer = try context.makeSocket(.router)
        defer { writer.close() }
        try writer.setOption(.linger, 0)
        try writer.setOption(.receiveTimeout, patienceMilliseconds)
        try writer.bind(directory.ipc("writer"))
        let forwarder = try ChangeForwarder(context: context, security: nil, logger: logger)
        defer { forwarder.close() }
        let toggle = #"{"op":"toggle","name":"France","id":"big"}"#
        // The first try connects; over ipc the connection is made in the background.
        #expect(
            eventually {
                forwarder.forward(request("client", toggle), to: directory.ipc("writer"), now: .now)
            })
        let received = try #require(try writer.receive())
        _ = try writer.send(Array(received.dropLast()) + [Data(count: Reply.maximumBytes + 1)])
        // Counted, not kept: a failure must not print 16 MB of reply.
        var taken = 0
        let deadline = ContinuousClock.now + .seconds(1)  // unscaled: waits for nothing to come
        while ContinuousClock.now < deadline {
            taken += forwarder.receiveReplies().count
            usleep(10_000)
        }
        #expect(taken == 0, "a reply larger than any was taken")
    }

    /// Connected ahead (``ChangeForwarder/prepare(for:)``, at each heartbeat of a follower),
    /// the first change goes to the writer; connected only by that change, it was committed
    /// here while the handshake went on, competing with the writer for its seq.
    @Test func aWriterConnectedAheadTakesTheFirstChange() throws {
        let directory = try ScratchDirectory(prefix: "forwarder-ahead")
        defer { directory.remove() }
        let context = try Context()
        defer { context.terminate() }
        let writer = try Self.writer(bound: directory.ipc("writer"), in: context)
        defer { writer.close() }
        let forwarder = try ChangeForwarder(context: context, security: nil, logger: logger)
        defer { forwarder.close() }
        forwarder.prepare(for: directory.ipc("writer"))
        // The handshake runs in libzmq's background: a moment for it, not a condition to see.
        sleep(for: .seconds(1) * testSlowdown)
        #expect(
            forwarder.forward(
                request("client", #"{"op":"toggle","name":"France","id":"first"}"#),
                to: directory.ipc("writer"), now: .now))
        #expect(try writer.receive()?.last == Data(#"{"op":"toggle","name":"France","id":"first"}"#.utf8))
    }

    @Test func nothingIsSentWithoutAConnectedWriter() throws {
        let context = try Context()
        defer { context.terminate() }
        let forwarder = try ChangeForwarder(context: context, security: nil, logger: logger)
        defer { forwarder.close() }
        // Nobody listens there (tcp; an inproc connect queues until a bind): the replica commits
        // the change itself.
        #expect(
            !forwarder.forward(
                request("c", #"{"op":"toggle","name":"France"}"#), to: "tcp://127.0.0.1:1", now: .now))
        #expect(!forwarder.hasPending(peer: Data("c".utf8)))
        #expect(forwarder.forwarded == 0, "a change committed here is not counted as forwarded")
    }

    /// A writer that hangs (it accepted the connection and reads nothing) makes the DEALER keep
    /// what it forwards: at most ``ChangeForwarder/queuedRequests`` requests (16 MiB of the
    /// largest), the rest committed here, also once their time is up and they are answered
    /// `unavailable` (they stay queued). Forwarding padded toggles until refused, then expiring
    /// them, forty times: what was taken stays near the queue's bound and the kernel's buffers.
    @Test func whatAHungWriterMakesTheReplicaQueueIsBoundedInBytes() throws {
        let context = try Context()
        defer { context.terminate() }
        let writer = try context.makeSocket(.router)
        defer { writer.close() }
        try writer.setOption(.linger, 0)
        try writer.setOption(.receiveHighWaterMark, 1)
        try writer.bind("tcp://127.0.0.1:*")
        let endpoint = try writer.lastEndpoint
        let forwarder = try ChangeForwarder(context: context, security: nil, logger: logger)
        defer { forwarder.close() }
        // A toggle padded to the largest request the service takes.
        let toggle = #"{"op":"toggle","name":"France"}"#
        let padded = String(
            toggle.dropLast() + String(repeating: " ", count: Limits.maximumRequestBytes - toggle.utf8.count)
                + "}")
        #expect(padded.utf8.count == Limits.maximumRequestBytes)
        // The connection is made by the first forward; ZMQ_IMMEDIATE refuses until it is up.
        #expect(eventually { forwarder.forward(request("first", padded), to: endpoint, now: .now) })
        var taken = 1
        var now = ContinuousClock.now
        for round in 0..<40 {
            var refused = false
            for index in 0..<2_000 where !refused {
                if forwarder.forward(request("c-\(round)-\(index)", padded), to: endpoint, now: now) {
                    taken += 1
                } else {
                    refused = true
                }
            }
            #expect(refused, "round \(round): 2,000 taken")
            now += ChangeForwarder.replyTimeout
            _ = forwarder.expire(now: now)
            // Give libzmq's I/O thread a moment to move what it can into the kernel.
            usleep(2_000)
        }
        let takenBytes = taken * Limits.maximumRequestBytes
        print(
            "forwarder: a hung writer was sent \(takenBytes >> 20) MiB in 40 rounds of forwarding and expiring"
        )
        // The queue's 16 MiB, and what the kernel's loopback buffers and the writer's took.
        #expect(takenBytes <= 48 << 20, "\(takenBytes >> 20) MiB")
        #expect(taken >= Int(ChangeForwarder.queuedRequests), "\(taken)")
    }

    /// A writer that takes requests and answers none (hung, or an election key naming an
    /// endpoint that is not a replica's, for as long as the key stands): after one request's
    /// time runs out, the replica commits its own changes for ``ChangeForwarder/silencePause``,
    /// then tries the writer again; a reply, even late, ends the pause.
    @Test func aWriterThatAnswersNothingIsPassedOverForAPause() throws {
        let context = try Context()
        defer { context.terminate() }
        let writer = try Self.writer(bound: "inproc://silent-writer", in: context)
        defer { writer.close() }
        let forwarder = try ChangeForwarder(context: context, security: nil, logger: logger)
        defer { forwarder.close() }
        let toggle = #"{"op":"toggle","name":"France"}"#
        let start = ContinuousClock.now
        #expect(forwarder.forward(request("a", toggle), to: "inproc://silent-writer", now: start))
        let taken = try #require(try writer.receive())
        let overdue = start + ChangeForwarder.replyTimeout
        #expect(forwarder.expire(now: overdue).count == 1)
        // Passed over: the next change is committed here, at once.
        #expect(!forwarder.forward(request("b", toggle), to: "inproc://silent-writer", now: overdue))
        let later = overdue + ChangeForwarder.silencePause - .milliseconds(1)
        #expect(!forwarder.forward(request("c", toggle), to: "inproc://silent-writer", now: later))
        // Tried again once the pause is over.
        let after = overdue + ChangeForwarder.silencePause
        #expect(forwarder.forward(request("d", toggle), to: "inproc://silent-writer", now: after))
        _ = try #require(try writer.receive())
        #expect(forwarder.expire(now: after + ChangeForwarder.replyTimeout).count == 1)
        #expect(
            !forwarder.forward(request("e", toggle), to: "inproc://silent-writer", now: after + .seconds(3)))
        // A late reply to the first: the writer answers again, and is no longer passed over.
        _ = try writer.send(Array(taken.dropLast()) + [Data(#"{"ok":true,"seq":1}"#.utf8)])
        #expect(
            eventually {
                _ = forwarder.receiveReplies()
                return forwarder.forward(
                    request("f", toggle), to: "inproc://silent-writer", now: after + .seconds(3))
            })
    }

    /// Requests sent to a writer that was replaced since (it died with them, another was
    /// elected) expire without passing over the new one.
    @Test func requestsToAReplacedWriterDoNotPassOverTheNewOne() throws {
        let context = try Context()
        defer { context.terminate() }
        let old = try Self.writer(bound: "inproc://old-writer", in: context)
        defer { old.close() }
        let new = try Self.writer(bound: "inproc://new-writer", in: context)
        defer { new.close() }
        let forwarder = try ChangeForwarder(context: context, security: nil, logger: logger)
        defer { forwarder.close() }
        let toggle = #"{"op":"toggle","name":"France"}"#
        let start = ContinuousClock.now
        #expect(forwarder.forward(request("a", toggle), to: "inproc://old-writer", now: start))
        _ = try #require(try old.receive())
        #expect(forwarder.forward(request("b", toggle), to: "inproc://new-writer", now: start + .seconds(1)))
        _ = try #require(try new.receive())
        // The old writer's request expires first: the new writer is still tried.
        #expect(forwarder.expire(now: start + ChangeForwarder.replyTimeout).count == 1)
        #expect(forwarder.forward(request("c", toggle), to: "inproc://new-writer", now: start + .seconds(2)))
    }
}
