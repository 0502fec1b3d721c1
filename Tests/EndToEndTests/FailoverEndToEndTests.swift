import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// Clients of replicas of one service, on the built binary: `--command A,B` tries the
/// endpoints in turn with the same request id, `--events A,B` follows them all and takes each
/// seq once (README.md, "Replicas"; docs/PROTOCOL.md, "Replicas").
@Suite struct FailoverEndToEndTests {
    @Test func toggleFailsOverFromAnEndpointWithNothingListening() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let nobody = sandbox.scratch.ipc("nobody")
        let toggled = try Countries.run(
            ["toggle", "France", "--command", "\(nobody),\(sandbox.commandEndpoint)", "--timeout", "500"])
        #expect(toggled.exitCode == 0, "\(toggled)")
        #expect(toggled.stdout == "France: visited (seq 1)\n")
    }

    /// `toggle --command F,W` where F's `status` names W as the elected writer: a one-shot
    /// command does not follow it (docs/PROTOCOL.md, "Clients of replicas"); the change goes to
    /// F, which forwards, pinned to the store the status named.
    @Test func aOneShotChangeGoesWhereItsStatusWasAnswered() throws {
        let sandbox = try Sandbox()
        let (sockets, endpoints) = try fakeReplicas(["follower", "writer"], in: sandbox)
        defer { for socket in sockets { socket.close() } }
        let (follower, writer) = (sockets[0], sockets[1])
        let client = try Countries.start([
            "toggle", "France", "--command", endpoints.joined(separator: ","), "--timeout", "5000",
        ])
        defer { _ = client.stop(signal: SIGKILL) }
        var atFollower: [Request] = []
        var atWriter: [Request] = []
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        while client.isRunning, ContinuousClock.now < deadline {
            if let frames = try writer.receive(), let request = try? Request.decode(frames.last ?? Data()) {
                atWriter.append(request)
            }
            guard let frames = try follower.receive(),
                let request = try? Request.decode(frames.last ?? Data())
            else { continue }
            atFollower.append(request)
            var reply = Reply(seq: 1, country: IndexedCountry(index: 0, name: "France", visited: true))
            if request.command == .status {
                var status = ServiceStatus()
                status.writer = endpoints[1]
                reply = Reply(seq: 1)
                reply.status = status
            }
            reply.store = String(repeating: "ab", count: 16)
            _ = try follower.send(Array(frames.dropLast()) + [reply.encoded()])
        }
        let run = try client.finish(timeout: .seconds(5))
        #expect(run.exitCode == 0, "\(run)")
        #expect(atFollower.map(\.command) == [.status, .change(.toggle(.name("France")))])
        #expect(atFollower.last?.ifStore == String(repeating: "ab", count: 16))
        #expect(atWriter.isEmpty, "\(atWriter)")
    }

    @Test func anEmptyEndpointInAListIsAUsageError() throws {
        for arguments in [
            ["list", "--command", "ipc:///tmp/a,,ipc:///tmp/b"], ["list", "--command", "ipc:///tmp/a,"],
            ["events", "--events", ",ipc:///tmp/b"],
        ] {
            let run = try Countries.run(arguments)
            #expect(run.exitCode == 64, "\(arguments): \(run)")
            #expect(run.stderr.contains("has an empty endpoint"), "\(run.stderr)")
        }
    }

    @Test func noReplyFromAnyEndpointNamesThemAll() throws {
        let sandbox = try Sandbox()
        let endpoints = [sandbox.scratch.ipc("a"), sandbox.scratch.ipc("b")]
        let run = try Countries.run(
            ["count", "--command", endpoints.joined(separator: ","), "--timeout", "100", "--retries", "1"])
        #expect(run.exitCode == 69, "\(run)")
        #expect(endpoints.allSatisfy { run.stderr.contains($0) }, "\(run.stderr)")
    }

    /// A replica that answers `unavailable` to every try: the change may or may not have been
    /// applied, so the outcome is unknown (exit 75: check, or retry with the same id), not
    /// refused (1).
    @Test func unavailableEverywhereIsAnUnknownOutcome() throws {
        let sandbox = try Sandbox()
        let (sockets, endpoints) = try fakeReplicas(["unsure"], in: sandbox)
        defer { for socket in sockets { socket.close() } }
        let (router, endpoint) = (sockets[0], endpoints[0])
        let client = try Countries.start(["toggle", "France", "--command", endpoint, "--retries", "2"])
        defer { _ = client.stop(signal: SIGKILL) }
        var ids: [String] = []
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        while client.isRunning, ContinuousClock.now < deadline {
            guard let frames = try router.receive(), let body = frames.last else { continue }
            ids.append((try? Request.decode(body))?.id ?? "")
            let reply = Reply(error: CountriesError(.unavailable, "lost the quorum; retry with the same id"))
            _ = try router.send(Array(frames.dropLast()) + [reply.encoded()])
        }
        let run = try client.finish(timeout: .seconds(5))
        #expect(run.exitCode == 75, "\(run)")
        #expect(run.stderr.contains("outcome unknown"), "\(run.stderr)")
        #expect(run.stderr.contains("retry with the same id"), "\(run.stderr)")
        #expect(ids.count == 2 && Set(ids).count == 1, "both tries carry one id: \(ids)")
        #expect(ids.first.map { run.stderr.contains("--id \($0)") } == true, "\(run.stderr)")
    }

    /// The audit's case: the first replica takes the toggle and never answers in time (it may
    /// have committed it), the second has no quorum and says "nothing changed". The client
    /// must not report "nothing changed" (exit 1 then, in 11 of 18 runs, with the change
    /// applied): it says the outcome is unknown, with the id to send again (exit 75).
    @Test func aTimeoutThenNothingChangedElsewhereIsAnUnknownOutcome() throws {
        let sandbox = try Sandbox()
        let (sockets, endpoints) = try fakeReplicas(["slow", "no-quorum"], in: sandbox)
        defer { for socket in sockets { socket.close() } }
        let (silent, refusing) = (sockets[0], sockets[1])
        // Pinned by hand, so the client asks no `status` first (the fakes answer only changes).
        let client = try Countries.start([
            "toggle", "France", "--command", endpoints.joined(separator: ","), "--retries", "2", "--timeout",
            "300", "--if-store", String(repeating: "ab", count: 16),
        ])
        defer { _ = client.stop(signal: SIGKILL) }
        var ids: [String] = []
        let deadline = ContinuousClock.now + .seconds(10) * testSlowdown
        while client.isRunning, ContinuousClock.now < deadline {
            if let frames = try silent.receive(), let body = frames.last {
                ids.append((try? Request.decode(body))?.id ?? "")
            }
            guard let frames = try refusing.receive(), let body = frames.last else { continue }
            ids.append((try? Request.decode(body))?.id ?? "")
            let reply = Reply(
                error: CountriesError(.storageError, "the etcd cluster has no quorum; nothing changed"))
            _ = try refusing.send(Array(frames.dropLast()) + [reply.encoded()])
        }
        let run = try client.finish(timeout: .seconds(5))
        #expect(run.exitCode == 75, "\(run)")
        #expect(run.stderr.contains("outcome unknown"), "\(run.stderr)")
        #expect(ids.count == 2 && Set(ids).count == 1, "both tries carry one id: \(ids)")
        #expect(ids.first.map { run.stderr.contains("--id \($0)") } == true, "\(run.stderr)")
    }

    /// One real service and a raw PUB standing in for a second replica of it: it replays the
    /// service's events (same store, same seqs, same bodies) late and out of step, with
    /// heartbeats behind. `watch --json` prints each seq once, in order.
    @Test func watchOverTwoEventEndpointsPrintsEachSeqOnceInOrder() throws {
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox)
        defer { service.stop() }
        let context = try Context()
        let tap = try context.makeSocket(.sub)
        defer { tap.close() }
        try tap.setOption(.linger, 0)
        try tap.setOption(.receiveTimeout, 100)
        try tap.subscribe("")
        try tap.connect(sandbox.eventsEndpoint)
        let replica = try context.makeSocket(.pub)
        defer { replica.close() }
        try replica.setOption(.linger, 0)
        let replicaEndpoint = sandbox.scratch.ipc("replica")
        try replica.bind(replicaEndpoint)
        let store = try #require(try jsonReply(service.run(["status", "--json"]))["store"] as? String)

        let watch = try Countries.start([
            "watch", "--json", "--heartbeat-ms", "100", "--command", sandbox.commandEndpoint,
            "--events", "\(sandbox.eventsEndpoint),\(replicaEndpoint)",
        ])
        defer { _ = watch.stop(signal: SIGKILL) }
        #expect(eventually(within: .seconds(10)) { watch.stdoutSoFar.contains("\n") }, "\(watch)")
        // Let the tap's subscription settle before the first change.
        sleep(for: .milliseconds(300))

        // The lagging replica heartbeats seq 0 while the service goes ahead.
        var events: [[Data]] = []
        for target in ["France", "Italy", "Spain", "France", "Moldova"] {
            #expect(try service.run(["toggle", target]).exitCode == 0)
            _ = try replica.send([
                Data(Topic.heartbeat.rawValue.utf8), Heartbeat(seq: 0, store: store).encoded(),
            ])
        }
        #expect(
            eventually(within: .seconds(5)) {
                while let frames = try? tap.receive() {
                    if String(decoding: frames[0], as: UTF8.self) != Topic.heartbeat.rawValue {
                        events.append(frames)
                    }
                }
                return events.count == 5
            }, "the tap saw \(events.count) events")
        // Then it catches up: every event again, each followed by a heartbeat of its seq, and
        // once more a heartbeat from far behind.
        for (index, frames) in events.enumerated() {
            _ = try replica.send(frames)
            _ = try replica.send([
                Data(Topic.heartbeat.rawValue.utf8),
                Heartbeat(seq: UInt64(index + 1), store: store).encoded(),
            ])
            _ = try replica.send([
                Data(Topic.heartbeat.rawValue.utf8), Heartbeat(seq: 1, store: store).encoded(),
            ])
            sleep(for: .milliseconds(50))
        }
        // Long enough for a lagging replica to pass for a restarted service (three heartbeats).
        for _ in 0..<6 {
            _ = try replica.send([
                Data(Topic.heartbeat.rawValue.utf8), Heartbeat(seq: 2, store: store).encoded(),
            ])
            sleep(for: .milliseconds(100))
        }
        _ = watch.stop(signal: SIGTERM)
        let output = try watch.finish(timeout: .seconds(5))
        let seqs = try output.stdout.split(separator: "\n").map { line in
            try #require(try jsonObject(String(line))["seq"] as? Int)
        }
        #expect(seqs == [0, 1, 2, 3, 4, 5], "each seq once, in order: \(output)")
        #expect(!output.stderr.contains("stale"), "\(output.stderr)")
    }
}

/// Raw ROUTERs standing in for replicas, one bound on an ipc endpoint per name in `sandbox`
/// (linger 0; a receive waits at most 100 ms), with their endpoints; close them when done.
private func fakeReplicas(_ names: [String], in sandbox: Sandbox) throws -> (
    sockets: [Socket], endpoints: [String]
) {
    let context = try Context()
    var sockets: [Socket] = []
    let endpoints = names.map { sandbox.scratch.ipc($0) }
    for endpoint in endpoints {
        let socket = try context.makeSocket(.router)
        sockets.append(socket)
        try socket.setOption(.linger, 0)
        try socket.setOption(.receiveTimeout, 100)
        try socket.bind(endpoint)
    }
    return (sockets, endpoints)
}
