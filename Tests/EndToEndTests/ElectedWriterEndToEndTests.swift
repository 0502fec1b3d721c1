import CountriesClient
import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// One elected writer among replicas (docs/HA.md, "Commits"): the others forward changes to it,
/// so replicas no longer race for the seq; a writer that dies is replaced; and a former writer
/// paused past its lease commits nothing on the seq it last knew (the seq compare is the fence).
@Suite(
    .serialized, .hangGuard(),
    .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct ElectedWriterEndToEndTests {
    typealias Replicas = ReplicationEndToEndTests.Replicas
    typealias Requester = ReplicationEndToEndTests.Requester

    /// The index of the replica whose log last says it is the writer.
    private func writer(_ services: [Service]) -> Int? {
        services.firstIndex { service in
            let lines = service.process.stderrSoFar.split(separator: "\n").filter {
                $0.contains("writer election:")
            }
            return lines.last?.contains("this replica is the writer") == true
        }
    }

    /// Waits until one replica is the writer and every other one follows it.
    private func elected(_ replicas: Replicas, within limit: Duration = .seconds(10)) -> Int? {
        elected(replicas.services, within: limit)
    }

    private func elected(_ services: [Service], within limit: Duration = .seconds(10)) -> Int? {
        var found: Int?
        _ = eventually(within: limit) {
            found = writer(services)
            guard let found else { return false }
            return services.indices.allSatisfy { index in
                index == found
                    || services[index].process.stderrSoFar.split(separator: "\n").last {
                        $0.contains("writer election:")
                    }?.contains("the writer is \(services[found].sandbox.commandEndpoint)") == true
            }
        }
        return found
    }

    /// `adds` adds of names of their own, sent by `writers` clients through `endpoints` in turn,
    /// each with an id; what each client heard.
    private func add(
        writers: Int, adds: Int, through endpoints: [String], prefix: String
    ) -> [HistoryChecker.Operation] {
        let operations = Box<[HistoryChecker.Operation]>([])
        let start = ContinuousClock.now
        let group = DispatchGroup()
        for writer in 0..<writers {
            group.enter()
            Thread {
                defer { group.leave() }
                guard
                    let requesters = try? endpoints.map({ try Requester(endpoint: $0, timeout: .seconds(5)) })
                else { return }
                defer { for requester in requesters { requester.close() } }
                for number in 0..<adds {
                    let name = "\(prefix)\(writer)-\(number)"
                    let invoked = ContinuousClock.now - start
                    let body = #"{"op":"add","name":"\#(name)","id":"\#(name)"}"#
                    let outcome: HistoryChecker.Outcome
                    if let data = try? requesters[(writer + number) % requesters.count].request(body),
                        let reply = try? Reply.decode(data)
                    {
                        if let seq = reply.seq, reply.ok {
                            outcome = .acknowledged(seq: seq)
                        } else {
                            let code = reply.error?.code ?? "?"
                            outcome = code == "unavailable" ? .indeterminate : .refused(code: code)
                        }
                    } else {
                        outcome = .indeterminate
                    }
                    let operation = HistoryChecker.Operation(
                        id: name, name: name, invoked: invoked, completed: ContinuousClock.now - start,
                        outcome: outcome)
                    operations.update { $0.append(operation) }
                }
            }.start()
        }
        group.wait()
        return operations.value
    }

    /// The whole kept history from `endpoint`, page by page.
    private func history(_ endpoint: String) throws -> [HistoryChecker.Committed] {
        let requester = try Requester(endpoint: endpoint)
        defer { requester.close() }
        var committed: [HistoryChecker.Committed] = []
        while true {
            let since = committed.last?.seq ?? 0
            let reply = try Reply.decode(requester.request(#"{"op":"history","since":\#(since)}"#))
            let events = try #require(reply.events, "\(reply)")
            for event in events {
                if case .added(let row) = event.kind {
                    committed.append(.init(seq: event.seq, added: row.name))
                } else {
                    committed.append(.init(seq: event.seq, added: nil))
                }
            }
            if reply.more != true || events.isEmpty { return committed }
        }
    }

    /// Commands served, from `status --json`.
    private func served(_ service: Service) throws -> Int {
        let status = try jsonReply(try service.run(["status", "--json"]))
        return try #require(status["commands_served"] as? Int, "\(status)")
    }

    @Test func changesThroughBothReplicasAreAllCommittedByTheWriterNoneRefused() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let writer = try #require(elected(replicas), "no writer elected")
        let follower = 1 - writer
        // `status` says who the writer is, on both: the one the logs name.
        let writerEndpoint = replicas.sandboxes[writer].commandEndpoint
        for (index, expected) in [(writer, "this replica"), (follower, writerEndpoint)] {
            let status = try jsonReply(try replicas.services[index].run(["status", "--json"]))
            #expect(status["writer"] as? String == expected, "\(status)")
        }
        let human = try replicas.services[follower].run(["status"]).stdout
        #expect(human.contains("writer:           \(writerEndpoint)\n"), "\(human)")
        // Until the follower's connection to the writer is up, it commits changes itself (the
        // compare keeps that safe): once one change goes through it and it served only the
        // `status` around it, the connection is up.
        #expect(
            eventually(within: .seconds(10)) {
                guard let before = try? self.served(replicas.services[follower]),
                    (try? replicas.services[follower].run(["toggle", "France"]))?.exitCode == 0,
                    let after = try? self.served(replicas.services[follower])
                else { return false }
                return after - before == 1
            }, "the follower forwards no change to the writer")
        let servedBefore = try served(replicas.services[follower])
        let operations = add(
            writers: 4, adds: 30, through: replicas.sandboxes.map(\.commandEndpoint), prefix: "w")
        let notAcknowledged = operations.filter {
            if case .acknowledged = $0.outcome { return false }
            return true
        }
        #expect(
            notAcknowledged.isEmpty, "every change through either replica is committed: \(notAcknowledged)")
        let history = try history(replicas.sandboxes[follower].commandEndpoint)
        #expect(HistoryChecker.contiguous(history).isEmpty)
        #expect(HistoryChecker.exactlyOnce(operations, history: history).isEmpty)
        // The follower answers its own `status` calls and history pages; the 60 changes sent to
        // it went to the writer.
        let servedByFollower = try served(replicas.services[follower]) - servedBefore
        #expect(servedByFollower <= 5, "the follower served \(servedByFollower) requests itself")
    }

    /// The project's client given both replicas, the follower first (`--command F,W`;
    /// docs/PROTOCOL.md, "Clients of replicas"): the follower's `status` names the writer by
    /// the endpoint the client was given, so the changes go to the writer, not through the
    /// follower's hop. Once the writer is killed, they go to the survivor, and stay there.
    @Test func aClientOfBothReplicasSendsItsChangesToTheWriter() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let writer = try #require(elected(replicas), "no writer elected")
        let follower = 1 - writer
        let endpoints = [follower, writer].map { replicas.sandboxes[$0].commandEndpoint }
        let context = try Context()
        let client = CommandClient(context: context, endpoints: endpoints)
        for row in 0..<5 {
            let reply = try client.send(.change(.toggle(.index(row))))
            #expect(reply.ok, "\(reply)")
        }
        #expect(client.route.writer == 1, "the follower's status named the writer: \(client.route)")
        #expect(client.preferred == endpoints[1], "the writer answered the changes")

        replicas.services[writer].process.signal(SIGKILL)
        _ = replicas.services[writer].stop()
        // The survivor commits itself while it cannot reach the writer (docs/HA.md, "Commits"),
        // and the client stays with it rather than try the dead writer at every change.
        var failures: [String] = []
        for _ in 0..<10 {
            do {
                let reply = try client.send(.change(.toggle(.index(5))))
                if !reply.ok { failures.append("\(reply)") }
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.isEmpty, "after the kill: \(failures)")
        #expect(client.preferred == endpoints[0])
        #expect(client.route.writer != 1, "the dead writer is not followed again at once")
    }

    /// A writer this client cannot reach while the follower can forward for it: the writer's
    /// `--allow` has the service's key but not the client's (an allow-list updated on one
    /// replica before the other). The first change tries the writer, times out and is
    /// forwarded by the follower; the others go to the follower at once, though its `status`
    /// names the writer each time: one timeout in all, not one per change.
    @Test func aWriterThatRefusesTheClientCostsOneTimeoutNotOnePerChange() throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        let writerAllow = try workspace.directory("writer-allow")
        let followerAllow = try workspace.directory("follower-allow")
        for directory in [writerAllow, followerAllow] {
            try FileManager.default.copyItem(
                atPath: workspace.path + "/server.pub", toPath: directory + "/server.pub")
        }
        try FileManager.default.copyItem(
            atPath: workspace.path + "/rw/alice.pub", toPath: followerAllow + "/alice.pub")
        let etcd = try EtcdCluster(members: 1)
        defer { etcd.stop() }
        var services: [Service] = []
        defer { for service in services { service.stop() } }
        func start(allowing directory: String) throws -> Service {
            try Service(
                in: try Sandbox(),
                options: [
                    "--etcd", etcd.clientURLs.joined(separator: ","), "--curve-key",
                    workspace.path + "/server.key",
                    "--allow", directory,
                ], waitUntilReady: false)
        }
        // Started first, so its key has the lowest create revision: the writer.
        services.append(try start(allowing: writerAllow))
        #expect(elected(services) == 0, "the first replica was not elected")
        services.append(try start(allowing: followerAllow))
        try #require(elected(services) == 0, "the follower does not follow the first replica")

        let alice = try keys.certificate("rw/alice.key")
        let server = try keys.certificate("server.pub")
        let timeout = Duration.seconds(1) * testSlowdown
        let client = CommandClient(
            context: try Context(), endpoints: services.reversed().map(\.sandbox.commandEndpoint),
            timeout: timeout, tries: 3,
            security: ClientSecurity(
                publicKey: alice.publicKey, secretKey: try #require(alice.secretKey),
                serverKey: server.publicKey))
        let started = ContinuousClock.now
        var failures: [String] = []
        for row in 0..<10 {
            do {
                let reply = try client.send(.change(.toggle(.index(row % 8))))
                if !reply.ok { failures.append("\(reply)") }
            } catch {
                failures.append("\(error)")
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(failures.isEmpty, "\(failures)")
        #expect(elapsed < timeout * 4, "10 changes took \(elapsed): a timeout each would be \(timeout * 10)")
        #expect(client.preferred == services[1].sandbox.commandEndpoint, "the follower answers")
        #expect(client.route.writer == nil, "the writer is passed over")
    }

    @Test func aKilledWriterIsReplacedAndChangesGoOn() throws {
        let replicas = try Replicas(members: 3)
        defer { replicas.stop() }
        let writer = try #require(elected(replicas), "no writer elected")
        let survivor = 1 - writer
        #expect(try replicas.services[survivor].run(["add", "Before"]).exitCode == 0)
        replicas.services[writer].process.signal(SIGKILL)
        _ = replicas.services[writer].stop()
        // At once: its connection is gone, so the survivor commits itself.
        let right = try replicas.services[survivor].run(["add", "RightAfter"])
        #expect(right.exitCode == 0, "\(right)")
        // Once the dead writer's lease (2 s) ends, the survivor is elected.
        #expect(
            eventually(within: .seconds(10)) {
                replicas.services[survivor].process.stderrSoFar.contains("this replica is the writer")
            }, "\(replicas.services[survivor].process.stderrSoFar)")
        let status = try jsonReply(try replicas.services[survivor].run(["status", "--json"]))
        #expect(status["writer"] as? String == "this replica", "\(status)")
        let operations = add(
            writers: 2, adds: 10, through: [replicas.sandboxes[survivor].commandEndpoint], prefix: "after")
        #expect(
            operations.allSatisfy { if case .acknowledged = $0.outcome { true } else { false } },
            "\(operations)")
        let history = try history(replicas.sandboxes[survivor].commandEndpoint)
        #expect(HistoryChecker.contiguous(history).isEmpty)
        #expect(history.count == 22)
    }

    /// A writer stopped cleanly (SIGTERM) revokes its lease on the way out: its key is gone
    /// from etcd when it has exited, so the other replica is the writer at its next read, not a
    /// lease's TTL later.
    @Test func aCleanlyStoppedWriterLeavesNoKeyBehind() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let writer = try #require(elected(replicas), "no writer elected")
        let endpoints = ["--endpoints", replicas.etcd.clientURLs.joined(separator: ",")]
        let keys = try replicas.etcd.etcdctl(
            endpoints + ["get", "--prefix", "/countries/writer/", "--keys-only"])
        #expect(keys.stdout.split(separator: "\n").filter { !$0.isEmpty }.count == 2, "\(keys)")
        let stopped = replicas.services[writer].stop()
        #expect(stopped?.exitCode == 0, "\(String(describing: stopped))")
        #expect(stopped?.stderr.contains("lease revoked") == true, "\(String(describing: stopped))")
        let left = try replicas.etcd.etcdctl(endpoints + ["get", "--prefix", "/countries/writer/"])
        let lines = left.stdout.split(separator: "\n").filter { !$0.isEmpty }
        #expect(
            lines.count == 2 && lines.last.map(String.init) == replicas.sandboxes[1 - writer].commandEndpoint,
            "only the survivor's key: \(left)")
    }

    /// The writer is stopped (SIGSTOP) past its lease's TTL, the other replica is elected and
    /// commits; a change already queued at the paused one is then taken when it resumes, decided
    /// on the seq it knew: the seq compare refuses that commit, it catches up, and the history
    /// stays ordered and unique with nothing acknowledged lost.
    @Test func aPausedFormerWriterCommitsNothingOnAStaleSeq() throws {
        let replicas = try Replicas(members: 3)
        defer {
            for service in replicas.services { service.process.signal(SIGCONT) }
            replicas.stop()
        }
        let former = try #require(elected(replicas), "no writer elected")
        let other = 1 - former
        let endpoints = replicas.sandboxes.map(\.commandEndpoint)
        var operations = add(writers: 2, adds: 5, through: endpoints, prefix: "first")
        let formerPid = replicas.services[former].process.pid
        try #require(
            replicas.services[former].process.pause(),
            "the writer did not stop: \(threadStates(of: formerPid))")
        // Past the TTL, the lease ends and the other replica is elected.
        #expect(
            eventually(within: .seconds(15)) {
                replicas.services[other].process.stderrSoFar.split(separator: "\n").last {
                    $0.contains("writer election:")
                }?.contains("this replica is the writer") == true
            }, "\(replicas.services[other].process.stderrSoFar)")
        // Queued at the paused replica; its seq is now behind etcd's.
        let queued = Box<[HistoryChecker.Operation]>([])
        let paused = Thread {
            queued.value = add(writers: 1, adds: 1, through: [endpoints[former]], prefix: "paused")
        }
        paused.start()
        operations += add(writers: 2, adds: 5, through: [endpoints[other]], prefix: "second")
        replicas.services[former].process.signal(SIGCONT)
        #expect(eventually(within: .seconds(15)) { !queued.value.isEmpty })
        operations += queued.value
        operations += add(writers: 2, adds: 5, through: endpoints, prefix: "third")
        let history = try history(endpoints[other])
        #expect(HistoryChecker.contiguous(history).isEmpty, "\(history)")
        #expect(HistoryChecker.exactlyOnce(operations, history: history).isEmpty, "\(operations) \(history)")
        let acknowledged = operations.filter { if case .acknowledged = $0.outcome { true } else { false } }
        #expect(acknowledged.count >= 30, "\(operations)")
        // Taken once it resumed: decided again on etcd's seq (by the compare's refusal, or after
        // its event tail caught up first), never committed on the seq it knew when paused. If
        // the replica handles it before its quorum probe has run since the pause, it refuses it
        // with `storage_error` (nothing was sent to etcd), which the history check holds it to.
        let outcome = queued.value.first?.outcome
        let decided: Bool
        switch outcome {
        case .acknowledged?, .refused(code: "storage_error")?: decided = true
        default: decided = false
        }
        #expect(decided, "\(queued.value) \(replicas.services[former].process.stderrSoFar)")
    }

    /// With CURVE a follower signs in to the writer with the service's own key pair: with the
    /// service's public key allowed, changes are forwarded; without it, the writer refuses the
    /// handshake and the follower commits them itself, saying why.
    @Test(arguments: [true, false]) func withCurveTheFollowerSignsInWithTheServiceKey(allowed: Bool) throws {
        let workspace = try SecurityWorkspace()
        defer { workspace.remove() }
        let keys = try SecurityKeys(workspace)
        if allowed {
            try FileManager.default.copyItem(
                atPath: workspace.path + "/server.pub", toPath: workspace.path + "/rw/server.pub")
        }
        let etcd = try EtcdCluster(members: 1)
        defer { etcd.stop() }
        var services: [Service] = []
        defer { for service in services { service.stop() } }
        for _ in 0..<2 {
            services.append(
                try Service(
                    in: try Sandbox(),
                    options: [
                        "--etcd", etcd.clientURLs.joined(separator: ","), "--curve-key",
                        workspace.path + "/server.key",
                        "--allow", workspace.path + "/rw",
                    ], waitUntilReady: false))
        }
        let writer = try #require(elected(services), "no writer elected")
        let follower = services[1 - writer]
        func add(_ name: String) throws -> Execution {
            try Countries.run(
                ["add", name, "--command", follower.sandbox.commandEndpoint] + keys.client("rw/alice"))
        }
        for number in 0..<10 {
            // A writer that has not answered the handshake for a second is logged as unreachable.
            if number == 5 { Thread.sleep(forTimeInterval: 1.5 * Double(testSlowdown)) }
            let added = try add("Curve\(number)")
            #expect(added.exitCode == 0, "\(added)")
        }
        let status = try Countries.run(
            ["status", "--json", "--command", follower.sandbox.commandEndpoint] + keys.client("rw/alice"))
        let served = try #require(try jsonReply(status)["commands_served"] as? Int, "\(status)")
        let unreachable = follower.process.stderrSoFar.contains("cannot be reached")
        if allowed {
            #expect(served <= 3, "the follower committed \(served) itself")
            #expect(!unreachable, "\(follower.process.stderrSoFar)")
        } else {
            #expect(served >= 10, "refused by the writer, the follower commits itself")
            #expect(unreachable, "\(follower.process.stderrSoFar)")
        }
    }
}
