import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

// Hosts, a service, relays and subscribers for the relay tests in network namespaces. Built on
// the fault harness (FaultProcess, FaultCommand, FaultList); everything here is prefixed `Relay`.
// Every resource made here has a `stop()`/`remove()` that a test calls in `defer`.

/// Hosts of our own joined by veth pairs (the shared ``VirtualNetwork``).
typealias RelayNetwork = VirtualNetwork

/// `countries serve` (heartbeats every 200 ms; in memory, or on `store`) on one host of a
/// ``RelayNetwork``: commands bound on the address toward one neighbour, events on the address
/// toward another.
final class RelayService: Sendable {
    let command: String
    let events: String
    let namespace: String
    /// Client options for commands run on the service's own host (keys, for CURVE).
    let clientOptions: [String]
    let process: FaultProcess

    init(
        _ network: RelayNetwork, host: String, commandsToward: String, eventsToward: String,
        store: String? = nil, options: [String] = ["--insecure"], clientOptions: [String] = []
    ) throws {
        namespace = network.namespace(host)
        command = "tcp://\(network.address(of: host, toward: commandsToward)):5555"
        events = "tcp://\(network.address(of: host, toward: eventsToward)):5556"
        self.clientOptions = clientOptions
        process = try FaultProcess.countries(
            ["serve", "--command", command, "--events", events, "--heartbeat-ms", relayHeartbeatMilliseconds]
                + (store.map { ["--db", $0] } ?? ["--in-memory"]) + options, namespace: namespace)
        guard process.stderr.waitFor(timeout: .seconds(20), { $0.contains("serving commands on") }) != nil
        else {
            process.stop()
            throw FaultError("the service did not start: \(process.stderr.text)")
        }
    }

    /// The service's `list --json`, asked on its own host.
    func list() throws -> FaultList {
        let result = try FaultCommand.countries(
            ["list", "--json", "--command", command] + clientOptions, namespace: namespace)
        guard let list = FaultList(json: result.stdout) else { throw FaultError("list failed: \(result)") }
        return list
    }

    /// SIGTERM (then SIGKILL); the exit status.
    @discardableResult
    func stop() -> Int32? { process.stop() }
}

/// `countries relay` on one host: follows `from`, binds port 5557 on the address toward
/// `bindToward`.
final class RelayForwarder: Sendable {
    let endpoint: String
    let process: FaultProcess

    init(
        _ network: RelayNetwork, host: String, from upstream: String, bindToward: String,
        options: [String] = ["--insecure"]
    ) throws {
        endpoint = "tcp://\(network.address(of: host, toward: bindToward)):5557"
        process = try FaultProcess.countries(
            ["relay", "--from", upstream, "--bind", endpoint] + options, namespace: network.namespace(host))
        guard process.stderr.waitFor(timeout: .seconds(20), { $0.contains("relaying ") }) != nil else {
            process.stop()
            throw FaultError("the relay did not start: \(process.stderr.text)")
        }
    }

    func stop() { process.stop() }
}

/// A `watch --json` and an `on-change` (which prints `seq N EVENT` per run) on one host, both
/// following `events` (a relay) and asking `command` (the service) for snapshots and history.
/// Heartbeats every 200 ms: 600 ms of silence makes them stale.
final class RelaySubscribers: Sendable {
    let watch: FaultProcess
    let onChange: FaultProcess

    init(_ network: RelayNetwork, host: String, command: String, events: String, options: [String] = [])
        throws
    {
        let common = [
            "--heartbeat-ms", relayHeartbeatMilliseconds, "--timeout", "500", "--command", command,
            "--events", events,
        ]
        let watch = try FaultProcess.countries(
            ["watch", "--json"] + common + options, namespace: network.namespace(host))
        self.watch = watch
        do {
            onChange = try FaultProcess.countries(
                ["on-change"] + common + options
                    + ["--", "/bin/sh", "-c", "echo \"seq $COUNTRIES_SEQ $COUNTRIES_EVENT\""],
                namespace: network.namespace(host))
        } catch {
            watch.stop()
            throw error
        }
    }

    var all: [(name: String, process: FaultProcess)] { [("watch", watch), ("on-change", onChange)] }

    /// How many stderr lines each has written so far, to look only at what comes later.
    var marks: [Int] { all.map { $0.process.stderr.lines.count } }

    /// For each subscriber, the first stderr line from its mark on that holds `text` (they write
    /// `countries: stale: ...` and `countries: live at seq N`), waiting up to `timeout` in all.
    func waitFor(_ text: String, from marks: [Int], timeout: Duration) -> [FaultLineLog.Line?] {
        let deadline = ContinuousClock.now + timeout
        return zip(all, marks).map { subscriber, mark in
            subscriber.process.stderr.waitFor(from: mark, timeout: max(.zero, deadline - .now)) {
                $0.contains(text)
            }?.line
        }
    }

    /// The seqs on-change ran for, in order, and whether any run was a reset.
    var onChangeRuns: (seqs: [UInt64], resets: Int) {
        var seqs: [UInt64] = []
        var resets = 0
        for line in onChange.stdout.lines {
            let words = line.text.split(separator: " ")
            guard words.count == 3, words[0] == "seq", let seq = UInt64(words[1]) else { continue }
            seqs.append(seq)
            if words[2] == "reset" { resets += 1 }
        }
        return (seqs, resets)
    }

    /// Waits until watch's last line is `list` and on-change's last run is at its seq; when that
    /// happened, or nil.
    func waitConverged(to list: FaultList, timeout: Duration) -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let last = watch.stdout.lines.last, FaultList(json: last.text) == list,
                onChangeRuns.seqs.last ?? 0 == list.seq
            {
                return .now
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    /// What they printed, for a failure message.
    var transcript: String {
        all.map { name, process in
            "--- \(name) stderr\n\(process.stderr.text)--- \(name) stdout (last 3)\n"
                + process.stdout.lines.suffix(3).map { $0.text + "\n" }.joined()
        }.joined()
    }

    func stop() {
        onChange.stop()
        watch.stop()
    }
}

/// Toggles countries one after another from a host, on a thread of its own, until paused: at most
/// 100 toggles per run. Counts acknowledged and failed toggles. Like `FaultToggler`, with client
/// options (CURVE keys).
final class RelayToggler: @unchecked Sendable {
    // @unchecked: the mutable state is only touched under `lock`.
    private let namespace: String
    private let arguments: [String]
    private let lock = NSLock()
    private var running = false
    private var acknowledged = 0
    private var failed = 0
    private var done: DispatchSemaphore?

    init(namespace: String, command: String, options: [String] = []) {
        self.namespace = namespace
        arguments = ["--json", "--timeout", "1000", "--retries", "3", "--command", command] + options
    }

    var acknowledgedCount: Int { lock.withLock { acknowledged } }
    var failures: Int { lock.withLock { failed } }

    func start() {
        let semaphore = DispatchSemaphore(value: 0)
        lock.withLock {
            running = true
            done = semaphore
        }
        Thread.detachNewThread { [self] in
            var turn = 0
            while lock.withLock({ running }), turn < 100 {
                let target = ["0", "1", "3", "France"][turn % 4]
                turn += 1
                let result = try? FaultCommand.countries(
                    ["toggle", target] + arguments, namespace: namespace, timeout: .seconds(10))
                lock.withLock {
                    if let result, result.status == 0 { acknowledged += 1 } else { failed += 1 }
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
            semaphore.signal()
        }
    }

    /// Stops the loop and waits for the toggle in hand. Safe to call twice, and before start.
    func stop() {
        let semaphore = lock.withLock {
            running = false
            defer { done = nil }
            return done
        }
        _ = semaphore?.wait(timeout: .now() + 15.0 * Double(testSlowdown))
    }
}

/// Sleeps until `instant` (at once if it has passed).
func relaySleep(until instant: ContinuousClock.Instant) {
    sleep(for: instant - .now)
}

/// The heartbeat the relay tests run the service and subscribers with: 200 ms, doubled under
/// the sanitizers (`COUNTRIES_TEST_SLOWDOWN`), whose slower processes otherwise miss three
/// heartbeats now and then and go stale without any fault.
let relayHeartbeatMilliseconds = String(200 * min(testSlowdown, 2))
