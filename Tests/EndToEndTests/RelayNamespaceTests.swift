import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// `countries relay` across hosts (network namespaces joined by veth pairs): the service on one
/// host, relays on others, a `watch --json` and an `on-change` on a host of their own that
/// reaches the relay for events and the service directly for commands.
///
/// Issue 7: "Subscribers point --events at a relay and --command at the service; watch, select and
/// on-change work unchanged through one or two relays ... cut and restore each link; everything
/// converges." docs/RELIABILITY.md: "Every subscriber ends on the service's state, whatever it
/// missed".
@Suite(
    .serialized,
    .enabled(
        if: FaultEnvironment.canCreateNamespaces,
        "skipped: network namespaces cannot be created here (needs root or CAP_NET_ADMIN and ip(8))")
)
struct RelayNamespaceTests {
    /// How long a link stays down: well over the subscribers' 600 ms silence window, under
    /// ZeroMQ's heartbeat timeouts (6 s on a subscriber, 15 s on the relay and the service), so
    /// the TCP connections ride it out.
    static let outage = Duration.seconds(3)
    /// Over a subscriber's 6 s ZeroMQ heartbeat timeout: it drops its connection to the relay and
    /// makes a new one (a new pipe in the relay's XPUB, its subscription sent again).
    static let longOutage = Duration.seconds(8)

    /// svc ── r1 ── sub, and svc ── sub for commands. Service↔relay, then relay↔subscriber, go
    /// down for 3 s each, then relay↔subscriber for 8 s, while the service's host keeps toggling.
    @Test(.hangGuard())
    func throughOneRelayEachLinkCutMakesSubscribersStaleThenTheyConverge() throws {
        let network = try RelayNetwork(
            hosts: ["svc", "r1", "sub"], links: [("svc", "r1"), ("r1", "sub"), ("svc", "sub")])
        defer { network.remove() }
        let service = try RelayService(network, host: "svc", commandsToward: "sub", eventsToward: "r1")
        defer { service.stop() }
        let relay = try RelayForwarder(network, host: "r1", from: service.events, bindToward: "sub")
        defer { relay.stop() }
        let subscribers = try RelaySubscribers(
            network, host: "sub", command: service.command, events: relay.endpoint)
        defer { subscribers.stop() }
        try Self.requireLive(subscribers)
        let toggler = RelayToggler(namespace: service.namespace, command: service.command)
        defer { toggler.stop() }

        var report: [String] = []
        for (a, b, outage) in [
            ("svc", "r1", Self.outage), ("r1", "sub", Self.outage), ("r1", "sub", Self.longOutage),
        ] {
            report.append(
                try Self.cutAndRestore(
                    a, b, for: outage, network: network, service: service, subscribers: subscribers,
                    toggler: toggler))
        }
        try Self.expectEveryEventRanOnce(subscribers, service: service)
        #expect(toggler.failures == 0, "toggles failed while only event links were down")
        #expect(relay.process.isRunning, "the relay stopped: \(relay.process.stderr.text)")
        print("relay, one hop: \(toggler.acknowledgedCount) toggles; " + report.joined(separator: "; "))
    }

    /// svc ── r1 ── r2 ── sub, and svc ── sub for commands: two relays in a chain; the link
    /// between them goes down for 3 s; then the service restarts on its store (the first relay's
    /// XSUB connects again and subscribes again upstream).
    @Test(.hangGuard())
    func throughTwoRelaysSubscribersConvergeAcrossACutBetweenThemAndAServiceRestart() throws {
        let directory = try FaultTemporaryDirectory()
        defer { directory.remove() }
        let store = directory.path + "/countries.db"
        let network = try RelayNetwork(
            hosts: ["svc", "r1", "r2", "sub"],
            links: [("svc", "r1"), ("r1", "r2"), ("r2", "sub"), ("svc", "sub")])
        defer { network.remove() }
        var service = try RelayService(
            network, host: "svc", commandsToward: "sub", eventsToward: "r1", store: store)
        defer { service.stop() }
        let first = try RelayForwarder(network, host: "r1", from: service.events, bindToward: "r2")
        defer { first.stop() }
        let second = try RelayForwarder(network, host: "r2", from: first.endpoint, bindToward: "sub")
        defer { second.stop() }
        let subscribers = try RelaySubscribers(
            network, host: "sub", command: service.command, events: second.endpoint)
        defer { subscribers.stop() }
        try Self.requireLive(subscribers)
        let toggler = RelayToggler(namespace: service.namespace, command: service.command)
        defer { toggler.stop() }

        let cut = try Self.cutAndRestore(
            "r1", "r2", for: Self.outage, network: network, service: service, subscribers: subscribers,
            toggler: toggler)

        let marks = subscribers.marks
        let stopped = ContinuousClock.now
        #expect(service.stop() == 0, "the service did not stop cleanly: \(service.process.stderr.text)")
        let stale = subscribers.waitFor("stale:", from: marks, timeout: .seconds(3))
        relaySleep(until: stopped + .seconds(1))
        // Stamped before the start: a subscriber may be live on the new service before the
        // harness has seen it answer (it did, under ASan), never before it started.
        let restarted = ContinuousClock.now
        service = try RelayService(
            network, host: "svc", commandsToward: "sub", eventsToward: "r1", store: store)
        toggler.start()
        Thread.sleep(forTimeInterval: 1)
        let restart = try Self.expectStaleThenConverged(
            stale, marks: marks, restored: restarted, service: service, subscribers: subscribers,
            toggler: toggler)
        try Self.expectEveryEventRanOnce(subscribers, service: service)
        #expect(toggler.failures == 0)
        print(
            "relay, two hops: \(toggler.acknowledgedCount) toggles; \(cut); service restarted after 1 s: \(restart)"
        )
    }

    /// svc ── r1 ── sub with CURVE on both sides of the relay: the relay has its own key, in the
    /// service's --allow-read; the subscribers' key is in the relay's --allow and the service's
    /// --allow; they take --server-key service.pub --events-server-key relay.pub. The relay is
    /// killed and started again while toggles go on: stale, then converged over new handshakes.
    /// A stranger whose key the service admits (read-only) but the relay does not is refused by
    /// the relay and, once its first silence window has passed, stays stale.
    @Test(.hangGuard())
    func withCurveOnBothSidesOfTheRelaySubscribersConvergeAcrossARelayRestart() throws {
        let keys = try FaultTemporaryDirectory()
        defer { keys.remove() }
        mkdir(keys.path + "/relay", 0o700)
        mkdir(keys.path + "/clients", 0o700)
        mkdir(keys.path + "/readers", 0o700)
        for name in ["service", "relay/relay", "clients/client", "readers/stranger"] {
            let made = try FaultCommand.countries(["keygen", "\(keys.path)/\(name)"])
            try #require(made.status == 0, "keygen \(name): \(made)")
        }
        let client = [
            "--curve-key", "\(keys.path)/clients/client.key", "--server-key", "\(keys.path)/service.pub",
        ]
        let network = try RelayNetwork(
            hosts: ["svc", "r1", "sub"], links: [("svc", "r1"), ("r1", "sub"), ("svc", "sub")])
        defer { network.remove() }
        let service = try RelayService(
            network, host: "svc", commandsToward: "sub", eventsToward: "r1",
            options: [
                "--curve-key", "\(keys.path)/service.key", "--allow", "\(keys.path)/clients", "--allow-read",
                "\(keys.path)/relay", "--allow-read", "\(keys.path)/readers",
            ], clientOptions: client)
        defer { service.stop() }
        let relayOptions = [
            "--curve-key", "\(keys.path)/relay/relay.key", "--server-key", "\(keys.path)/service.pub",
            "--allow", "\(keys.path)/clients",
        ]
        var relay = try RelayForwarder(
            network, host: "r1", from: service.events, bindToward: "sub", options: relayOptions)
        defer { relay.stop() }
        let subscribers = try RelaySubscribers(
            network, host: "sub", command: service.command, events: relay.endpoint,
            options: client + ["--events-server-key", "\(keys.path)/relay/relay.pub"])
        defer { subscribers.stop() }
        let stranger = try FaultProcess.countries(
            [
                "watch", "--json", "--heartbeat-ms", relayHeartbeatMilliseconds, "--timeout", "500",
                "--command", service.command,
                "--events", relay.endpoint, "--curve-key", "\(keys.path)/readers/stranger.key",
                "--server-key",
                "\(keys.path)/service.pub", "--events-server-key", "\(keys.path)/relay/relay.pub",
            ], namespace: network.namespace("sub"))
        defer { stranger.stop() }
        try Self.requireLive(subscribers)
        #expect(
            relay.process.stderr.waitFor(timeout: .seconds(5)) {
                $0.contains("refused connection: key") && $0.contains("not in the allow-lists")
            } != nil, "the relay did not log the stranger's refusal: \(relay.process.stderr.text)")
        let toggler = RelayToggler(namespace: service.namespace, command: service.command, options: client)
        defer { toggler.stop() }

        toggler.start()
        Thread.sleep(forTimeInterval: 0.5)
        let marks = subscribers.marks
        relay.process.signal(SIGKILL)
        _ = relay.process.wait(timeout: .seconds(5))
        let killed = ContinuousClock.now
        let stale = subscribers.waitFor("stale:", from: marks, timeout: .seconds(3))
        relaySleep(until: killed + .seconds(2))
        let restarted = ContinuousClock.now
        relay = try RelayForwarder(
            network, host: "r1", from: service.events, bindToward: "sub", options: relayOptions)
        let report = try Self.expectStaleThenConverged(
            stale, marks: marks, restored: restarted, service: service, subscribers: subscribers,
            toggler: toggler)
        try Self.expectEveryEventRanOnce(subscribers, service: service)
        #expect(toggler.failures == 0)
        // It says live on its first snapshot (from the service, which admits it), as every
        // subscriber does before its silence window has passed; then stale, for good.
        let strangerLines = stranger.stderr.lines.map(\.text)
        let strangerStale = strangerLines.firstIndex { $0.contains("stale:") }
        #expect(strangerStale != nil, "the stranger never said stale: \(stranger.stderr.text)")
        #expect(
            !strangerLines.dropFirst((strangerStale ?? 0) + 1).contains { $0.contains("live at seq") },
            "a key the relay does not admit went live: \(stranger.stderr.text)")
        print("relay, CURVE: \(toggler.acknowledgedCount) toggles; relay killed for 2 s: \(report)")
    }

    // MARK: - Steps

    /// Both subscribers say "live at seq" within 20 s.
    static func requireLive(_ subscribers: RelaySubscribers) throws {
        let live = subscribers.waitFor("live at seq", from: [0, 0], timeout: .seconds(20))
        try #require(live.allSatisfy { $0 != nil }, "not live through the relay:\n\(subscribers.transcript)")
    }

    /// With the toggler running, takes the link between `a` and `b` down for `outage`, brings it
    /// back, and expects both subscribers stale during the outage, live after it, and, once the
    /// toggles stop, on the service's list. Returns what was measured.
    static func cutAndRestore(
        _ a: String, _ b: String, for outage: Duration, network: RelayNetwork, service: RelayService,
        subscribers: RelaySubscribers, toggler: RelayToggler
    ) throws -> String {
        toggler.start()
        Thread.sleep(forTimeInterval: 0.5)
        // Marked at the fault itself: a slow machine may see a spurious stale and live before it.
        let marks = subscribers.marks
        let down = ContinuousClock.now
        try network.setLink(a, b, up: false)
        var linkIsDown = true
        defer { if linkIsDown { try? network.setLink(a, b, up: true) } }
        let stale = subscribers.waitFor("stale:", from: marks, timeout: outage)
        relaySleep(until: down + outage)
        // Stamped before the restore, for the same reason as a restart.
        let restored = ContinuousClock.now
        try network.setLink(a, b, up: true)
        linkIsDown = false
        let report = try expectStaleThenConverged(
            stale, marks: marks, restored: restored, service: service, subscribers: subscribers,
            toggler: toggler)
        return "\(a)-\(b) down \(faultMilliseconds(outage)) ms: \(report)"
    }

    /// Expects each subscriber's `stale` line before `restored`, its next "live at seq" after it
    /// (they were live at `marks`, so that line follows a stale one), and then,
    /// with the toggler stopped, watch's last line equal to the service's list and on-change's
    /// last run at its seq. Stops the toggler.
    static func expectStaleThenConverged(
        _ stale: [FaultLineLog.Line?], marks: [Int], restored: ContinuousClock.Instant, service: RelayService,
        subscribers: RelaySubscribers, toggler: RelayToggler
    ) throws -> String {
        let live = subscribers.waitFor("live at seq", from: marks, timeout: .seconds(20))
        toggler.stop()
        let stopped = ContinuousClock.now
        for (index, name) in ["watch", "on-change"].enumerated() {
            let staleLine = stale[index]
            #expect(staleLine != nil, "\(name) never said stale:\n\(subscribers.transcript)")
            if let staleLine { #expect(staleLine.at < restored, "\(name) said stale only after the restore") }
            #expect(
                live[index].map { $0.at > restored } == true,
                "\(name) did not go live again after the restore:\n\(subscribers.transcript)")
        }
        let list = try service.list()
        let converged = subscribers.waitConverged(to: list, timeout: .seconds(15))
        #expect(
            converged != nil,
            "not on the service's \(list) at seq \(list.seq):\n\(subscribers.transcript)")
        let staleMs = stale.map { $0.map { String(faultMilliseconds($0.at - restored)) } ?? "never" }
        let liveMs = live.map { $0.map { String(faultMilliseconds($0.at - restored)) } ?? "never" }
        return
            "stale at \(staleMs.joined(separator: "/")) ms, live at \(liveMs.joined(separator: "/")) ms "
            + "from the restore (watch/on-change); converged "
            + (converged.map { "\(faultMilliseconds($0 - stopped)) ms after the toggles stopped" } ?? "never")
            + " at seq \(list.seq)"
    }

    /// on-change ran once for every event, in order: seqs 1...N for the service's seq N, no reset.
    static func expectEveryEventRanOnce(_ subscribers: RelaySubscribers, service: RelayService) throws {
        let list = try service.list()
        let runs = subscribers.onChangeRuns
        #expect(list.seq > 0)
        #expect(
            runs.seqs == Array(1...max(1, list.seq)),
            "on-change ran for \(runs.seqs), not 1...\(list.seq)")
        #expect(runs.resets == 0)
    }
}
