import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// A hung etcd member (SIGSTOP: it still accepts TCP connections, so connecting succeeds and
/// requests hang) costs the replicas little: their requests and watches leave it, and every
/// acknowledged change reaches a subscriber of each replica within the target (docs/HA.md,
/// "Failures", a hung member). Each member is stopped in turn, the leader among them.
@Suite(
    .serialized, .hangGuard(minutes: 6),
    .enabled(if: EtcdCluster.isAvailable, "etcd is not installed"))
struct HungMemberTests {
    /// The target: an acknowledged change published by every replica within this, while a
    /// member hangs.
    static let target = Duration.milliseconds(1_500)

    /// One acknowledged change's delay from its acknowledgement to its publication on one
    /// replica's subscriber.
    private struct Delay {
        var seq: UInt64
        var replica: Int
        var acknowledged: Duration
        var delay: Duration
    }

    @Test func aHungMemberDelaysNoPublicationPastTheTarget() throws {
        let hold = Duration.seconds(4) * testSlowdown
        let recovery = Duration.seconds(3) * testSlowdown
        let etcd = try EtcdCluster(members: 3)
        defer { etcd.stop() }
        // Every replica names the members in the same order, so before they spread their watches
        // every replica's tail and requests start on the first one, as in the issue.
        let urls = etcd.clientURLs.joined(separator: ",")
        var sandboxes: [Sandbox] = []
        var services: [Service] = []
        defer { for service in services { service.stop(signal: SIGKILL) } }
        for index in 0..<2 {
            let sandbox = try Sandbox()
            sandboxes.append(sandbox)
            services.append(
                try Service(in: sandbox, options: ["--etcd", urls, "--replica-name", "r\(index)"]))
        }
        let subscribers = try sandboxes.map { sandbox in
            try Countries.start(
                [
                    "events", "--since", "0", "--json", "--command", sandbox.commandEndpoint, "--events",
                    sandbox.eventsEndpoint,
                ])
        }
        defer { for subscriber in subscribers { subscriber.stop() } }
        try #require(
            eventually(within: .seconds(10)) { subscribers.allSatisfy { $0.stderrSoFar.contains("live") } })

        let origin = ContinuousClock.now
        let commands = sandboxes.map(\.commandEndpoint)
        // A client through both replicas: each change tries one first and the other on failure.
        let writers = (0..<2).map {
            ReplicaWriter(
                "Writer \($0)", network: nil, host: "", endpoints: commands, preferred: $0, origin: origin,
                pause: .milliseconds(50))
        }
        var writersStopped = false
        defer { if !writersStopped { for writer in writers { _ = writer.stop() } } }
        // Whatever happens, no member is left stopped.
        let stopped = Box<pid_t?>(nil)
        defer { if let pid = stopped.value { kill(pid, SIGCONT) } }

        sleep(for: .seconds(2))
        // Each phase runs from one SIGSTOP to the next: the hang, then the member's return.
        var phases: [(label: String, from: Duration, to: Duration)] = [("no fault", .zero, .zero)]
        for member in 0..<3 {
            let leader = etcd.leaderIndex()
            let pid = try #require(etcd.pid(of: member), "m\(member) is not running")
            let from = ContinuousClock.now - origin
            phases[phases.count - 1].to = from
            stopped.value = pid
            #expect(pauseProcess(pid), "m\(member) did not stop: \(threadStates(of: pid))")
            sleep(for: hold)
            kill(pid, SIGCONT)
            stopped.value = nil
            sleep(for: recovery)
            phases.append(
                ("m\(member) hung\(leader == member ? " (the leader)" : "")", from, .seconds(3_600)))
        }
        let operations = writers.flatMap { $0.stop() }
        writersStopped = true
        for writer in writers { #expect(writer.problems.isEmpty, "\(writer.problems)") }

        let events: [Event]
        do {
            events = try ReplicaCommandClients(endpoints: commands, timeout: .seconds(5)).history(from: 0)
        } catch {
            let logs = services.map { String($0.process.stderrSoFar.suffix(4_000)) }
            Issue.record("the history could not be read: \(error); replicas' logs: \(logs)")
            return
        }
        let history = events.map { event -> HistoryChecker.Committed in
            guard case .added(let row) = event.kind else { return .init(seq: event.seq, added: nil) }
            return .init(seq: event.seq, added: row.name)
        }
        let finalSeq = history.last?.seq ?? 0
        let settled = eventually(within: .seconds(15), every: .milliseconds(100)) {
            subscribers.allSatisfy { Self.arrivals($0).keys.contains(finalSeq) }
        }
        #expect(settled, "the subscribers did not reach seq \(finalSeq)")

        var violations = HistoryChecker.contiguous(history).map(\.description)
        violations += HistoryChecker.exactlyOnce(operations, history: history).map(\.description)
        let arrivals = subscribers.map(Self.arrivals)
        for (index, subscriber) in subscribers.enumerated() {
            violations += HistoryChecker.monotonic(Self.seqs(subscriber), subscriber: "r\(index)").map(
                \.description)
        }
        #expect(violations.isEmpty, "\(violations.prefix(20))")

        // From each acknowledgement to the change's publication on each replica's subscriber.
        var delays: [Delay] = []
        for operation in operations {
            guard case .acknowledged(let seq) = operation.outcome else { continue }
            for (replica, arrived) in arrivals.enumerated() {
                let delay = arrived[seq].map { $0 - origin - operation.completed } ?? .seconds(3_600)
                delays.append(
                    Delay(seq: seq, replica: replica, acknowledged: operation.completed, delay: delay))
            }
        }
        let acknowledged = operations.filter { if case .acknowledged = $0.outcome { true } else { false } }
        #expect(acknowledged.count > 100, "too few changes to measure: \(acknowledged.count)")
        for phase in phases {
            let inPhase = delays.filter { $0.acknowledged >= phase.from && $0.acknowledged < phase.to }
            // The longest the writers went without an acknowledgement: the pause in changes.
            let acks =
                [phase.from]
                + acknowledged.map(\.completed).filter { $0 >= phase.from && $0 < phase.to }.sorted()
            let pause = zip(acks, acks.dropFirst()).map { $1 - $0 }.max() ?? .zero
            print(
                "hung member: \(phase.label): \(Self.figures(inPhase)); longest without an acknowledgement \(pause.milliseconds) ms"
            )
        }
        for (index, service) in services.enumerated() {
            let log = service.process.stderrSoFar
            print(
                "hung member: r\(index) left a silent watch \(log.components(separatedBy: "delivered nothing").count - 1) times, stopped heartbeating \(log.components(separatedBy: "heartbeats stopped").count - 1) times"
            )
        }
        print("hung member: whole run (\(acknowledged.count) acknowledged changes): \(Self.figures(delays))")
        let worst = try #require(delays.max { $0.delay < $1.delay })
        let status = try services[0].run(["status"]).stdout
        #expect(status.contains("publication lag:"), "\(status)")
        #expect(
            worst.delay < Self.target * testSlowdown,
            "seq \(worst.seq) reached r\(worst.replica)'s subscriber \(worst.delay.milliseconds) ms after its acknowledgement"
        )
    }

    /// A watch on a member that hangs while nothing else of the replica uses it: only what it
    /// fails to deliver tells. The replica's own commit is published through another member
    /// within about half a second (0.4 s, then a read), and its log says why.
    @Test func aSilentWatchIsLeftWhenItsReplicaCommits() throws {
        let etcd = try EtcdCluster(members: 3)
        defer { etcd.stop() }
        let leader = try #require(etcd.leaderIndex(), "no etcd leader")
        // The watched member last in the list, so requests and the probe start elsewhere; the
        // name `r2` makes the tail watch through the third member.
        let watched = leader == 2 ? 1 : 2
        let others = (0..<3).filter { $0 != watched }
        let urls = (others + [watched]).map { etcd.clientURLs[$0] }.joined(separator: ",")
        let sandbox = try Sandbox()
        let service = try Service(in: sandbox, options: ["--etcd", urls, "--replica-name", "r2"])
        defer { service.stop(signal: SIGKILL) }
        let subscriber = try Countries.start(
            ["events", "--json", "--command", sandbox.commandEndpoint, "--events", sandbox.eventsEndpoint])
        defer { subscriber.stop() }
        try #require(eventually(within: .seconds(10)) { subscriber.stderrSoFar.contains("live") })
        #expect(try service.run(["toggle", "France"]).exitCode == 0)
        try #require(eventually(within: .seconds(5)) { Self.arrivals(subscriber).keys.contains(1) })

        let pid = try #require(etcd.pid(of: watched))
        defer { kill(pid, SIGCONT) }
        try #require(pauseProcess(pid), "m\(watched) did not stop: \(threadStates(of: pid))")
        let toggle = try service.run(["toggle", "France", "--json"])
        // From the acknowledgement, as the target reads: starting the CLI is no part of it.
        let acknowledged = ContinuousClock.now
        #expect(toggle.exitCode == 0, "\(toggle)")
        #expect(eventually(within: .seconds(5)) { Self.arrivals(subscriber).keys.contains(2) })
        let delay = try #require(Self.arrivals(subscriber)[2]) - acknowledged
        print(
            "hung member: a silent watch left, publication \(delay.milliseconds) ms after the toggle was acknowledged"
        )
        #expect(delay < .seconds(1) * testSlowdown)
        // The service's stderr is read by a thread of its own, maybe behind the subscriber's.
        #expect(
            eventually(within: .seconds(5)) {
                service.process.stderrSoFar.contains("delivered nothing after seq 1")
            }, "\(service.process.stderrSoFar)")
    }

    /// The worst and median delay, and the seq and replica of the worst.
    private static func figures(_ delays: [Delay]) -> String {
        let sorted = delays.sorted { $0.delay < $1.delay }
        guard let worst = sorted.last else { return "no acknowledged change" }
        let median = sorted[sorted.count / 2].delay
        return
            "\(sorted.count) publications, worst \(worst.delay.milliseconds) ms (seq \(worst.seq) on r\(worst.replica)), p50 \(median.milliseconds) ms"
    }

    /// When the subscriber printed each seq.
    private static func arrivals(_ subscriber: RunningProcess) -> [UInt64: ContinuousClock.Instant] {
        var arrivals: [UInt64: ContinuousClock.Instant] = [:]
        for line in subscriber.stdout.lines {
            guard let seq = seq(line.text) else { continue }
            if arrivals[seq] == nil { arrivals[seq] = line.at }
        }
        return arrivals
    }

    /// The seqs the subscriber printed, in order.
    private static func seqs(_ subscriber: RunningProcess) -> [UInt64] {
        subscriber.stdout.lines.compactMap { seq($0.text) }
    }

    private static func seq(_ line: String) -> UInt64? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["seq"] as? UInt64
    }
}
