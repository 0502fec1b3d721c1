import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// Replicated mode from outside (docs/HA.md): `countries serve --etcd` replicas on a real etcd
/// are one service: one global seq, every change published by every replica, a retry on
/// another replica applied once, reads never older than an acknowledged change, and a replica
/// without a quorum that refuses changes, stops heartbeating and recovers by itself.
@Suite(
    .serialized, .hangGuard(),
    .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct ReplicationEndToEndTests {
    /// A REQ-style DEALER that sends exact bytes and returns the reply's bytes.
    final class Requester {
        let context: Context
        let socket: Socket

        /// Waits up to `timeout` for each reply, times ``testSlowdown`` (the sanitizers).
        init(endpoint: String, timeout: Duration = .seconds(10)) throws {
            context = try Context()
            socket = try context.makeSocket(.dealer)
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveTimeout, Int32((timeout * testSlowdown).milliseconds))
            try socket.connect(endpoint)
        }

        func request(_ body: String) throws -> Data {
            try #require(try socket.send([Data(), Data(body.utf8)]))
            let frames = try #require(try socket.receive(), "no reply")
            return try #require(frames.last)
        }

        func close() {
            socket.close()
            context.terminate()
        }
    }

    /// `members` etcd members (one by default) and `count` replicas on them, each in a sandbox
    /// of its own; with several members each replica talks to another member first.
    final class Replicas {
        let etcd: EtcdCluster
        let sandboxes: [Sandbox]
        let services: [Service]

        init(count: Int = 2, members: Int = 1, options: [String] = []) throws {
            etcd = try EtcdCluster(members: members)
            var sandboxes: [Sandbox] = []
            var services: [Service] = []
            do {
                for replica in 0..<count {
                    let sandbox = try Sandbox()
                    sandboxes.append(sandbox)
                    let urls = etcd.clientURLs
                    let rotated = urls[(replica % urls.count)...] + urls[..<(replica % urls.count)]
                    services.append(
                        try Service(
                            in: sandbox, options: ["--etcd", rotated.joined(separator: ",")] + options))
                }
            } catch {
                for service in services { service.stop(signal: SIGKILL) }
                etcd.stop()
                throw error
            }
            self.sandboxes = sandboxes
            self.services = services
        }

        func stop() {
            for service in services { service.stop() }
            etcd.stop()
        }

        var etcdPid: pid_t? { etcd.pid(of: 0) }
    }

    /// `countries events --json` on one replica, its lines so far.
    private func subscribe(_ sandbox: Sandbox) throws -> RunningProcess {
        try Countries.start(
            ["events", "--json", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint])
    }

    private func seqs(_ process: RunningProcess) -> [UInt64] {
        process.stdoutSoFar.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["seq"] as? UInt64
        }
    }

    @Test func twoReplicasAreOneService() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let (a, b) = (replicas.services[0], replicas.services[1])
        let watchers = try replicas.sandboxes.map(subscribe)
        defer { for watcher in watchers { watcher.stop() } }
        #expect(eventually(within: .seconds(10)) { watchers.allSatisfy { $0.stderrSoFar.contains("live") } })

        #expect(try a.run(["toggle", "France"]).stdout == "France: visited (seq 1)\n")
        #expect(try b.run(["toggle", "France"]).stdout == "France: not visited (seq 2)\n")
        #expect(try a.run(["add", "Atlantis"]).exitCode == 0)
        // A read on the other replica right after an acknowledgement sees it.
        let atlantis = try b.run(["get", "Atlantis", "--json"])
        #expect(try jsonReply(atlantis)["seq"] as? Int == 3, "\(atlantis)")

        #expect(eventually(within: .seconds(10)) { watchers.allSatisfy { self.seqs($0) == [1, 2, 3] } })
        // The same bytes from both replicas.
        #expect(watchers[0].stdoutSoFar == watchers[1].stdoutSoFar)

        let status = try b.run(["status"]).stdout
        for label in ["replica:", "etcd members:", "etcd leader:", "etcd quorum:      yes"] {
            #expect(status.contains(label), "\(status)")
        }
        #expect(try a.run(["status", "--json"]).stdout.contains(#""etcd_leader":"m0""#))
    }

    @Test func aRetryOnTheOtherReplicaGetsTheFirstReplyAndAppliesOnce() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let first = try Requester(endpoint: replicas.sandboxes[0].commandEndpoint)
        defer { first.close() }
        let second = try Requester(endpoint: replicas.sandboxes[1].commandEndpoint)
        defer { second.close() }
        let toggle = #"{"op":"toggle","name":"Spain","id":"spain-1"}"#
        let reply = try first.request(toggle)
        #expect(try Reply.decode(reply).seq == 1)
        #expect(try second.request(toggle) == reply, "the first reply, byte for byte")
        #expect(
            try Reply.decode(second.request(#"{"op":"remove","name":"Spain","id":"spain-1"}"#)).error?.code
                == "conflict")
        #expect(try Reply.decode(first.request(#"{"op":"count"}"#)).seq == 1)
    }

    /// Four writers through both replicas at once: every acknowledged seq is unique, they run
    /// 1...N without a gap, and both replicas published all of them in order.
    @Test func concurrentWritersThroughBothReplicasGetOneContiguousSeq() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let watchers = try replicas.sandboxes.map(subscribe)
        defer { for watcher in watchers { watcher.stop() } }
        #expect(eventually(within: .seconds(10)) { watchers.allSatisfy { $0.stderrSoFar.contains("live") } })
        let endpoints = replicas.sandboxes.map(\.commandEndpoint)
        let perWriter = 40
        let seqs = Box<[UInt64]>([])
        let failures = Box<[String]>([])
        let group = DispatchGroup()
        for writer in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let requesters = try endpoints.map { try Requester(endpoint: $0) }
                    defer { for requester in requesters { requester.close() } }
                    for number in 0..<perWriter {
                        let body = #"{"op":"toggle","index":\#(number % 4),"id":"w\#(writer)-\#(number)"}"#
                        let reply = try Reply.decode(requesters[(writer + number) % 2].request(body))
                        guard let seq = reply.seq, reply.ok else {
                            failures.update { $0.append("\(body): \(reply)") }
                            continue
                        }
                        seqs.update { $0.append(seq) }
                    }
                } catch {
                    failures.update { $0.append("writer \(writer): \(error)") }
                }
            }.start()
        }
        group.wait()
        #expect(failures.value.isEmpty, "\(failures.value)")
        let total = UInt64(4 * perWriter)
        #expect(seqs.value.sorted() == Array(1...total))
        #expect(
            eventually(within: .seconds(10)) { watchers.allSatisfy { self.seqs($0) == Array(1...total) } })
    }

    /// Id-less writes through two replicas, one right after the other: the second replica's
    /// answer is decided on what etcd holds, not on its copy, which has not seen the first
    /// write yet (it acknowledged a no-op with a lower seq in a quarter of such rounds, and the
    /// first write was lost).
    @Test func anIdLessWriteOnAReplicaBehindIsDecidedOnEtcdsState() throws {
        let replicas = try Replicas(members: 3)
        defer { replicas.stop() }
        let first = try Requester(endpoint: replicas.sandboxes[0].commandEndpoint)
        defer { first.close() }
        let second = try Requester(endpoint: replicas.sandboxes[1].commandEndpoint)
        defer { second.close() }
        for round in 0..<30 {
            let visited = round % 2 == 0
            let one = try Reply.decode(first.request(#"{"op":"set","name":"France","visited":\#(!visited)}"#))
            let two = try Reply.decode(second.request(#"{"op":"set","name":"France","visited":\#(visited)}"#))
            let read = try Reply.decode(second.request(#"{"op":"get","name":"France"}"#))
            #expect(one.ok && two.ok, "round \(round): \(one), \(two)")
            #expect(
                (two.seq ?? 0) > (one.seq ?? .max),
                "round \(round): the second write was acknowledged at seq \(two.seq ?? 0), before the first's \(one.seq ?? 0)"
            )
            #expect(
                read.country?.visited == visited, "round \(round): an acknowledged write was lost: \(read)")
        }
    }

    @Test func aReplicaWithoutQuorumRefusesChangesStopsHeartbeatsAndRecovers() throws {
        let replicas = try Replicas(count: 1)
        defer { replicas.stop() }
        let service = replicas.services[0]
        let watcher = try subscribe(replicas.sandboxes[0])
        defer { watcher.stop() }
        #expect(eventually(within: .seconds(10)) { watcher.stderrSoFar.contains("live") })
        let etcd = try #require(replicas.etcdPid)
        var stopped = true
        defer { if stopped { kill(etcd, SIGCONT) } }
        try #require(pauseProcess(etcd), "etcd did not stop: \(threadStates(of: etcd))")

        #expect(eventually(within: .seconds(10)) { watcher.stderrSoFar.contains("stale") })
        let refused = try service.run(["toggle", "France"])
        #expect(refused.exitCode != 0)
        #expect(refused.stderr.contains("the etcd cluster has no quorum"), "\(refused)")
        let read = try service.run(["count"])
        #expect(read.exitCode != 0, "no read answers while the state cannot be confirmed: \(read)")

        kill(etcd, SIGCONT)
        stopped = false
        #expect(eventually(within: .seconds(10)) { (try? service.run(["toggle", "France"]))?.exitCode == 0 })
        #expect(
            eventually(within: .seconds(10)) {
                watcher.stderrSoFar.hasSuffix("live at seq 1\n") || self.seqs(watcher) == [1]
            })
        #expect(
            try service.run(["count", "--json"]).stdout.contains(#""seq":1"#),
            "refused changes changed nothing")
    }

    /// Three `reset`s of a list of 5,000 long names, pipelined into one batch: each event is
    /// about 700 KB, so one etcd transaction could not take them all (etcd refuses requests over
    /// 1.5 MiB); each gets a commit of its own and all three succeed.
    @Test func bigChangesInOneBatchEachGetACommitOfTheirOwn() throws {
        let seedDirectory = try Sandbox()
        let seed = seedDirectory.file("seed.txt")
        let names = (0..<5_000).map { "Country number \($0) " + String(repeating: "x", count: 70) }
        try names.joined(separator: "\n").write(toFile: seed, atomically: true, encoding: .utf8)
        let replicas = try Replicas(count: 1, options: ["--seed", seed])
        defer { replicas.stop() }
        let requester = try Requester(endpoint: replicas.sandboxes[0].commandEndpoint)
        defer { requester.close() }
        for index in 0..<3 {
            try #require(
                try requester.socket.send([Data(), Data(#"{"op":"reset","id":"reset-\#(index)"}"#.utf8)]))
        }
        let sent = ContinuousClock.now
        var seqs: [UInt64?] = []
        var arrivals: [Duration] = []
        for _ in 0..<3 {
            let frames = try #require(
                try requester.socket.receive(), "no reply; the replies so far came after \(arrivals)")
            arrivals.append(ContinuousClock.now - sent)
            let reply = try Reply.decode(try #require(frames.last))
            #expect(reply.ok, "\(reply.error?.message ?? "")")
            seqs.append(reply.seq)
        }
        #expect(seqs == [1, 2, 3])
        // Each reply leaves once its own commit is done, not once the whole batch's are: the
        // first waited for all three (over 10 s in 2 of 7 TSan runs) and timed out its client.
        print("bigChangesInOneBatch: replies after \(arrivals)")
    }

    /// One value in the log that is not an event (anyone on etcd's port can write one): the
    /// replicas name the key in their log and `status`, stop claiming to be live (no
    /// heartbeats), refuse reads with a message naming it, and a replica started meanwhile
    /// starts (it refused to). The next change overwrites the key, and everything recovers.
    @Test func aValueInTheLogThatIsNotAnEventIsReportedByKeyAndRecovered() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let service = replicas.services[0]
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        let watcher = try subscribe(replicas.sandboxes[1])
        defer { watcher.stop() }
        #expect(eventually(within: .seconds(10)) { watcher.stderrSoFar.contains("live") })

        let key = "/countries/events/00000000000000000002"
        try replicas.etcd.put(key, "not an event")
        #expect(
            eventually(within: .seconds(10)) { watcher.stderrSoFar.contains("stale") },
            "\(watcher.stderrSoFar)")
        let read = try service.run(["count"])
        #expect(read.exitCode != 0 && read.stderr.contains(key), "\(read)")
        let status = try service.run(["status", "--json"])
        #expect(status.stdout.contains(#""store_damage":"the key \#(key) in etcd holds"#), "\(status)")

        let late = try Sandbox()
        let third = try Service(
            in: late, options: ["--etcd", replicas.etcd.clientURLs.joined(separator: ",")],
            waitUntilReady: false)
        defer { third.stop() }
        #expect(
            eventually(within: .seconds(10)) {
                (try? third.run(["status"]))?.stdout.contains("store damage") == true
            },
            "a replica starts on a damaged log: \(third.process.stderr.text)")

        // A change commits at seq 2 (the seq key still says 1) and overwrites the key.
        let toggle = try service.run(["toggle", "Italy"])
        #expect(toggle.exitCode == 0 && toggle.stdout.contains("seq 2"), "\(toggle)")
        #expect(eventually(within: .seconds(10)) { (try? service.run(["count"]))?.exitCode == 0 })
        #expect(
            eventually(within: .seconds(10)) {
                watcher.stderrSoFar.hasSuffix("live at seq 2\n") || self.seqs(watcher).last == 2
            })
        #expect(
            eventually(within: .seconds(10)) {
                !((try? third.run(["status"]))?.stdout.contains("store damage") ?? true)
            })
    }

    /// A well-formed event that is no change of the list before it (a row past the end), put
    /// with the seq key by anyone on etcd's port: the replicas publish nothing of it, name it
    /// as damage in `status` and hold heartbeats; once the key holds a change that applies, a
    /// read catches up and everything recovers. Before, both published it and went on
    /// heartbeating while every read was refused.
    @Test func anEventThatDoesNotApplyIsNotPublishedAndIsNamedAsDamage() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let service = replicas.services[0]
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        let store = try #require(try jsonReply(try service.run(["status", "--json"]))["store"] as? String)
        let context = try Context()
        let subscriber = try context.makeSocket(.sub)
        defer { subscriber.close() }
        try subscriber.setOption(.linger, 0)
        try subscriber.setOption(.receiveTimeout, 100)
        try subscriber.subscribe("")
        try subscriber.connect(replicas.sandboxes[1].eventsEndpoint)
        // Connected once a heartbeat comes.
        #expect(eventually(within: .seconds(10)) { (try? subscriber.receive()) != nil })

        let key = "/countries/events/00000000000000000002"
        try replicas.etcd.put(
            key,
            #"{"country":{"index":99999,"name":"Atlantis","visited":true},"seq":2,"store":"\#(store)","topic":"country.changed"}"#
        )
        try replicas.etcd.put("/countries/seq", "2")
        for replica in replicas.services {
            #expect(
                eventually(within: .seconds(10)) {
                    (try? replica.run(["status", "--json"]))?.stdout.contains(
                        #""store_damage":"event 2 in etcd does not apply to the list at seq 1"#) == true
                }, "\(replica.process.stderr.text)")
        }
        func text(_ frames: [Data]) -> String {
            frames.map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
        }
        // What was queued before the listened replica saw the damage (heartbeats sent while it
        // still served seq 1) is drained, and may hold no event either.
        var queued: [String] = []
        while let frames = try subscriber.receive() { queued.append(text(frames)) }
        // A second of what the replica publishes meanwhile: no heartbeat, and not the event.
        var heard: [String] = []
        let listened = ContinuousClock.now
        while ContinuousClock.now - listened < .seconds(1) {
            if let frames = try subscriber.receive() { heard.append(text(frames)) }
        }
        let atlantis = (queued + heard).first { $0.contains("Atlantis") }
        #expect(atlantis == nil, "\(atlantis ?? "")")
        #expect(heard.isEmpty, "heartbeats are held: \(heard.count) heard, the first \(heard.first ?? "")")

        // The key rewritten with a change that applies: a read catches up, and it recovers.
        try replicas.etcd.put(
            key,
            #"{"country":{"index":3,"name":"Italy","visited":true},"seq":2,"store":"\#(store)","topic":"country.changed"}"#
        )
        #expect(eventually(within: .seconds(10)) { (try? service.run(["count"]))?.exitCode == 0 })
        for replica in replicas.services {
            #expect(
                eventually(within: .seconds(10)) {
                    (try? replica.run(["count"]))?.exitCode == 0
                        && (try? replica.run(["status", "--json"]))?.stdout.contains("store_damage") == false
                }, "\(replica.process.stderr.text)")
        }
        let toggle = try service.run(["toggle", "Spain"])
        #expect(toggle.exitCode == 0 && toggle.stdout.contains("seq 3"), "\(toggle)")
    }

    /// etcd put back to a snapshot (same cluster and member ids, the store key unchanged): the
    /// replica that ran through it stops claiming the old store (refuses, no heartbeats, says
    /// to restart), and a replica started afterwards serves it as a new store, so no seq is
    /// ever acknowledged twice under one store (a fresh replica once acknowledged seq 7 again
    /// with the same store id).
    @Test func aRestoredEtcdIsAnotherStoreNeverTheSameSeqsTwice() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let (a, running) = (replicas.services[0], replicas.services[1])
        for name in ["France", "Spain", "Italy"] { #expect(try a.run(["toggle", name]).exitCode == 0) }
        let before = try jsonReply(try a.run(["get", "France", "--json"]))
        let oldStore = try #require(before["store"] as? String)
        let scratch = try ScratchDirectory(prefix: "restore")
        try replicas.etcd.saveSnapshot(to: scratch.file("snapshot.db"))
        for name in ["Italy", "Spain", "France"] {
            let toggle = try a.run(["toggle", name])
            #expect(toggle.exitCode == 0, "\(toggle) \(a.process.stderr.text)")
        }
        let watcher = try subscribe(replicas.sandboxes[1])
        defer { watcher.stop() }
        #expect(eventually(within: .seconds(10)) { watcher.stderrSoFar.contains("live at seq 6") })
        a.stop()
        try replicas.etcd.restore(from: scratch.file("snapshot.db"))

        // A replica started now finds a new store, at the snapshot's seq.
        let late = try Sandbox()
        let fresh = try Service(
            in: late, options: ["--etcd", replicas.etcd.clientURLs.joined(separator: ",")])
        defer { fresh.stop() }
        let toggled = try jsonReply(try fresh.run(["toggle", "Italy", "--json"]))
        #expect(toggled["seq"] as? Int == 4, "\(toggled)")
        let newStore = try #require(
            try jsonReply(try fresh.run(["get", "Italy", "--json"]))["store"] as? String)
        #expect(newStore != oldStore, "seq 4 again under \(oldStore)")

        // The replica that ran through the restore refuses, says why, and stops heartbeats.
        #expect(
            eventually(within: .seconds(10)) {
                (try? running.run(["status"]))?.stdout.contains("restart it") == true
            }, "\(running.process.stderr.text)")
        let refused = try running.run(["toggle", "Spain"])
        #expect(refused.exitCode != 0 && refused.stderr.contains("restored from a snapshot"), "\(refused)")
        #expect(
            eventually(within: .seconds(10)) { watcher.stderrSoFar.contains("stale") },
            "\(watcher.stderrSoFar)")
        // Restarted, it serves the new store.
        running.stop()
        let again = try Service(
            in: replicas.sandboxes[1], options: ["--etcd", replicas.etcd.clientURLs.joined(separator: ",")])
        defer { again.stop() }
        let after = try jsonReply(try again.run(["get", "Italy", "--json"]))
        #expect(after["store"] as? String == newStore && after["seq"] as? Int == 4, "\(after)")
    }

    /// The seed is the store's, kept with it at creation: a replica given another `--seed`
    /// says so and resets to the store's (replicas with different seed files gave different
    /// lists after `reset`).
    @Test func everyReplicaResetsToTheStoresSeed() throws {
        let replicas = try Replicas(count: 1)
        defer { replicas.stop() }
        let seedDirectory = try Sandbox()
        let seed = seedDirectory.file("other.txt")
        try "Narnia\nAtlantis\n".write(toFile: seed, atomically: true, encoding: .utf8)
        let sandbox = try Sandbox()
        let other = try Service(
            in: sandbox, options: ["--etcd", replicas.etcd.clientURLs.joined(separator: ","), "--seed", seed])
        defer { other.stop() }
        #expect(
            other.process.stderr.text.contains(
                "this replica was given a seed of 2 countries, but the store keeps the seed it was created with (8 countries)"
            ), "\(other.process.stderr.text)")
        #expect(try other.run(["toggle", "France"]).exitCode == 0)
        let reset = try other.run(["reset", "--json"])
        #expect(reset.exitCode == 0, "\(reset)")
        #expect(try replicas.services[0].run(["count"]).stdout == "8\n")
        #expect(
            try other.run(["get", "United States"]).exitCode == 0, "the store's seed, not Narnia and Atlantis"
        )
    }

    /// Plain HTTP to an etcd on another host is refused before anything is bound, as a plaintext
    /// non-loopback endpoint is; loopback, https and --insecure are not.
    @Test func plainHTTPToAnotherHostIsRefusedWithoutInsecure() throws {
        let sandbox = try Sandbox()
        let refused = try Countries.run(
            ["serve", "--etcd", "http://127.0.0.1:1,http://10.99.0.1:2379"] + [
                "--command", sandbox.commandEndpoint,
            ],
            timeout: .seconds(10))
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.stderr.contains(
                "refusing to keep the list in etcd at http://10.99.0.1:2379 over plain HTTP"))
        #expect(refused.stderr.contains("--insecure"))
    }

    /// A toggle sent while etcd is frozen reaches it but gets no answer in time: `unavailable`.
    /// Once etcd runs again the transaction commits; the retry with the same id, on the other
    /// replica, gets that commit's reply and the change is there once.
    @Test func aCommitWithoutAnAnswerIsUnavailableAndItsRetryAppliesOnce() throws {
        let replicas = try Replicas()
        defer { replicas.stop() }
        let first = try Requester(endpoint: replicas.sandboxes[0].commandEndpoint)
        defer { first.close() }
        let etcd = try #require(replicas.etcdPid)
        var stopped = true
        defer { if stopped { kill(etcd, SIGCONT) } }
        try #require(pauseProcess(etcd), "etcd did not stop: \(threadStates(of: etcd))")
        let toggle = #"{"op":"toggle","name":"Italy","id":"italy-1"}"#
        let lost = try Reply.decode(first.request(toggle))
        #expect(lost.error?.code == "unavailable", "\(lost)")
        kill(etcd, SIGCONT)
        stopped = false

        let second = try Requester(endpoint: replicas.sandboxes[1].commandEndpoint)
        defer { second.close() }
        var retried: Reply?
        #expect(
            eventually(within: .seconds(10)) {
                retried = try? Reply.decode(second.request(toggle))
                return retried?.ok == true
            })
        #expect(retried?.seq == 1 && retried?.country?.visited == true, "\(String(describing: retried))")
        let history = try Reply.decode(second.request(#"{"op":"history","since":0}"#))
        #expect(history.events?.count == 1, "Italy was toggled once: \(history)")
    }
}
