import CountriesCore
import Foundation
@preconcurrency import Glibc
import LoadGeneration
import TestSupport
import Testing
import ZeroMQ

/// The promises of docs/RELIABILITY.md under faults, load and bad input, against the real
/// executable: durable before acknowledged and exactly once across SIGKILLs, nobody waits on a
/// stopped subscriber, and a flood of bad requests changes nothing. docs/RELIABILITY.md says what
/// each test proves; scripts/chaos runs them larger through the RELIABILITY_* variables.
///
/// Serialized: the throughput figures mean nothing if these tests compete with each other.
@Suite(.serialized) struct ReliabilityTests {
    // MARK: 1. Crash soak, exactly once

    /// One acknowledged toggle: what the reply said.
    struct Acknowledgement: Sendable {
        var seq: UInt64
        var index: Int
        var visited: Bool
    }

    @Test(.hangGuard(minutes: 15))
    func crashSoakLosesNothingAndAppliesNothingTwice() throws {
        let clients = ReliabilitySizes.value("RELIABILITY_CLIENTS", default: 4)
        let perClient = ReliabilitySizes.value("RELIABILITY_TOGGLES", default: 500)
        let kills = ReliabilitySizes.value("RELIABILITY_KILLS", default: 3)
        let total = clients * perClient
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch)
        defer { service.stop() }
        try service.start()
        let control = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { control.close() }
        let initial = try control.snapshot()
        let countryCount = initial.count

        let watcher = try ReliabilityWatcher("watch", service: service)
        defer { watcher.stop() }
        #expect(
            watcher.waitUntilShowing(initial, within: .seconds(15)) != nil,
            "the watcher never showed the list")

        let acknowledged = ReliabilityBox<[Acknowledgement]>([])
        let failures = ReliabilityBox<[String]>([])
        let retries = ReliabilityBox(0)
        let finished = ReliabilityBox(false)
        let started = ContinuousClock.now
        let endpoint = service.commandEndpoint
        let run = UUID().uuidString.prefix(8)
        let clientsDone = DispatchSemaphore(value: 0)
        Thread {
            defer { clientsDone.signal() }
            do {
                try runThreads(clients, within: .seconds(60 + total / 20)) { client in
                    var generator = SystemRandomNumberGenerator()
                    do {
                        let pirate = try ReliabilityPirate(endpoint: endpoint)
                        defer {
                            retries.update { $0 += pirate.retries }
                            pirate.close()
                        }
                        for number in 0..<perClient {
                            let index = Int.random(in: 0..<countryCount, using: &generator)
                            let id = "\(run)-\(client)-\(number)"
                            let body = #"{"op":"toggle","index":\#(index),"id":"\#(id)"}"#
                            let reply = try Reply.decode(
                                pirate.request(Data(body.utf8), perTry: .seconds(1), budget: .seconds(60)))
                            guard reply.ok, let seq = reply.seq, let row = reply.country, row.index == index
                            else {
                                failures.update { $0.append("toggle \(id) was answered \(reply)") }
                                continue
                            }
                            acknowledged.update {
                                $0.append(Acknowledgement(seq: seq, index: index, visited: row.visited))
                            }
                        }
                    } catch {
                        failures.update { $0.append("client \(client): \(error)") }
                    }
                }
            } catch {
                failures.update { $0.append("\(error)") }
            }
            finished.value = true
        }.start()

        // The kills land at random points spread over the run, each at a random moment.
        var killPoints = (0..<kills).map { _ in Int.random(in: total / 10...max(total / 10, total * 9 / 10)) }
            .sorted()
        var killed = 0
        var downtime = Duration.zero
        while !finished.value {
            if let next = killPoints.first, acknowledged.value.count >= next {
                killPoints.removeFirst()
                usleep(UInt32.random(in: 0...20_000))
                service.crash()
                killed += 1
                let down = ContinuousClock.now
                usleep(UInt32.random(in: 0...150_000))  // requests pile up meanwhile
                try service.start()
                downtime += ContinuousClock.now - down
            } else {
                usleep(2_000)
            }
        }
        _ = clientsDone.wait(timeout: .now() + 5.0 * Double(testSlowdown))
        let elapsed = ContinuousClock.now - started

        #expect(failures.value.isEmpty, "\(failures.value.prefix(5))")
        #expect(killed == kills, "only \(killed) of \(kills) kills happened before the clients finished")
        let acks = acknowledged.value
        #expect(acks.count == total, "\(acks.count) of \(total) toggles were acknowledged")

        // None lost, none twice: the acknowledged seqs are exactly s0+1 ... s0+N.
        let seqs = acks.map(\.seq).sorted()
        let expected = Array((initial.seq + 1)...(initial.seq + UInt64(total)))
        #expect(
            seqs == expected,
            "acknowledged seqs are not exactly \(initial.seq + 1)...\(initial.seq + UInt64(total))")
        let final = try control.snapshot()
        #expect(final.seq == initial.seq + UInt64(total), "the service is at seq \(final.seq)")

        // The final state is what the acknowledged toggles imply: each row flipped once per toggle.
        var flips = [Int](repeating: 0, count: countryCount)
        for ack in acks { flips[ack.index] += 1 }
        for (index, country) in final.countries.enumerated() {
            let implied = initial.countries[index].visited != (flips[index] % 2 == 1)
            #expect(
                country.visited == implied, "row \(index) is \(country.visited) after \(flips[index]) toggles"
            )
        }

        // Each reply and the stored event with its seq describe the same change.
        if total <= Limits.retainedEvents {
            // A page at a time (docs/PROTOCOL.md): ask again from the last seq while `more`.
            var events: [Event] = []
            var since = initial.seq
            for _ in 0...(total / Limits.historyPageEvents + 1) {
                let page = try control.reply(#"{"op":"history","since":\#(since)}"#)
                events += page.events ?? []
                guard page.more == true, let last = page.events?.last else { break }
                since = last.seq
            }
            #expect(events.count == total, "history has \(events.count) events")
            let byReply = Dictionary(acks.map { ($0.seq, $0) }, uniquingKeysWith: { first, _ in first })
            var mismatches = 0
            for event in events {
                guard let ack = byReply[event.seq], let row = event.country, row.index == ack.index,
                    row.visited == ack.visited
                else {
                    mismatches += 1
                    continue
                }
            }
            #expect(mismatches == 0, "\(mismatches) events differ from the reply with their seq")
        }

        // The subscriber that ran throughout ends on the service's state.
        let converged = watcher.waitUntilShowing(final, within: .seconds(20))
        #expect(
            converged != nil, "the watcher shows seq \(watcher.latest?.seq ?? 0), the service \(final.seq)")

        let rate = Double(total) / elapsed.timeInterval
        ReliabilitySizes.report(
            "soak toggles=\(total) clients=\(clients) kills=\(killed) retries=\(retries.value) elapsed=\(elapsed.milliseconds)ms restart_downtime=\(downtime.milliseconds)ms rate=\(Int(rate))/s watcher_converged_after=\(converged?.milliseconds ?? -1)ms"
        )
    }

    // MARK: 2. Slow and stuck subscribers

    @Test(.hangGuard(minutes: 10))
    func aStoppedSubscriberSlowsNobodyAndCatchesUp() throws {
        let phase = Duration.milliseconds(ReliabilitySizes.value("RELIABILITY_STOP_MS", default: 3_000))
        let clients = ReliabilitySizes.value("RELIABILITY_FLOOD_CLIENTS", default: 3)
        let window = ReliabilitySizes.value("RELIABILITY_WINDOW", default: 64)
        let rounds = max(1, ReliabilitySizes.value("RELIABILITY_ROUNDS", default: 1))
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch, logLevel: "error")
        defer { service.stop() }
        try service.start()
        let control = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { control.close() }
        let initial = try control.snapshot()

        let other = try ReliabilityWatcher("other", service: service)
        defer { other.stop() }
        #expect(other.waitUntilShowing(initial, within: .seconds(15)) != nil, "the watcher never went live")

        var cpuPerToggle: [String] = []
        var longestGaps: [Duration] = []
        var stoppedGaps: [Duration] = []
        /// Floods the service for `phase` and returns answered toggles per second.
        func flood() throws -> Double {
            let stopAt = ContinuousClock.now + phase
            let answered = ReliabilityBox(0)
            let ticks = service.pid.flatMap(ReliabilityMemory.cpuTicks(of:)) ?? 0
            defer {
                // The service's own CPU time per answered toggle: insensitive to other load.
                let used = (service.pid.flatMap(ReliabilityMemory.cpuTicks(of:)) ?? 0) - ticks
                cpuPerToggle.append("\(used * 10_000 / max(1, answered.value))us")
            }
            let problems = ReliabilityBox<[String]>([])
            let gap = ReliabilityBox(Duration.zero)
            let endpoint = service.commandEndpoint
            let countries = initial.count
            let start = ContinuousClock.now
            // The load generator the bench uses too (LoadGeneration): pipelined DEALER togglers.
            try runThreads(clients, within: phase + .seconds(30)) { client in
                let outcome = PipelinedToggler(
                    endpoint: endpoint, window: window, countries: countries, client: client
                )
                .run(until: stopAt)
                answered.update { $0 += outcome.ok }
                gap.update { $0 = max($0, outcome.longestGap) }
                if let error = outcome.error { problems.update { $0.append(error) } }
                if outcome.refused > 0 { problems.update { $0.append("\(outcome.refused) toggles refused") } }
            }
            #expect(problems.value.isEmpty, "\(problems.value)")
            longestGaps.append(gap.value)
            return Double(answered.value) / (ContinuousClock.now - start).timeInterval
        }

        // Rounds of: a phase without the stuck subscriber, then one with it (a new watcher,
        // live, then stopped). One more phase without it closes, so drift (a warming store,
        // other builds on the machine) falls on both sides alike.
        var without: [Double] = []
        var with: [Double] = []
        var stoppedEvents: [UInt64] = []
        var otherLags: [Int] = []
        var convergences: [Int] = []
        var noticedGaps: [Bool] = []
        var memory: [Int] = []
        for round in 0..<rounds {
            without.append(try flood())
            let beforeStop = try control.snapshot()
            let stuck = try ReliabilityWatcher("stuck\(round)", service: service)
            defer { stuck.stop() }
            #expect(
                stuck.waitUntilShowing(beforeStop, within: .seconds(15)) != nil, "the watcher never went live"
            )
            #expect(stuck.child.pause(), "the watcher did not stop: \(threadStates(of: stuck.child.pid))")
            memory.append(service.child?.residentKilobytes ?? 0)
            with.append(try flood())
            stoppedGaps.append(longestGaps.last ?? .zero)
            memory.append(service.child?.residentKilobytes ?? 0)
            let duringStop = try control.snapshot()
            stoppedEvents.append(duringStop.seq - beforeStop.seq)

            // The other subscriber kept up while one was stopped.
            let otherLag = other.waitUntilShowing(duringStop, within: .seconds(15))
            otherLags.append(otherLag?.milliseconds ?? -1)
            #expect(
                otherLag != nil,
                "the running watcher shows seq \(other.latest?.seq ?? 0) of \(duringStop.seq)")
            #expect(
                !other.child.stderr.text.contains("stale"),
                "the running watcher went stale: \(other.child.stderr.text)")
            #expect((stuck.latest?.seq ?? 0) <= beforeStop.seq, "the stopped watcher printed while stopped")

            stuck.child.signal(SIGCONT)
            let caughtUp = stuck.waitUntilShowing(duringStop, within: .seconds(30))
            convergences.append(caughtUp?.milliseconds ?? -1)
            #expect(
                caughtUp != nil,
                "the stopped watcher shows seq \(stuck.latest?.seq ?? 0) of \(duringStop.seq) after SIGCONT")
            noticedGaps.append(stuck.child.stderr.text.contains("stale"))
            stuck.stop()
        }
        without.append(try flood())

        let withoutStop = without.reduce(0, +) / Double(without.count)
        let withStop = with.reduce(0, +) / Double(with.count)
        let ratio = withStop / withoutStop
        // Strict (scripts/chaos): within 10 %. CI runs other suites beside this one on 2 cores, so
        // its wall-clock ratio swings from 0.5 to 1.3; a service that waited on the stopped
        // subscriber would answer next to nothing and leave clients without a reply for as long
        // as the stop lasts, which is what CI checks.
        let bound = ReliabilitySizes.strict ? 0.9 : 0.25
        #expect(
            ratio >= bound,
            "throughput fell from \(Int(withoutStop))/s to \(Int(withStop))/s with a stopped subscriber")
        let longestStoppedGap = stoppedGaps.max() ?? .zero
        #expect(
            longestStoppedGap < phase,
            "a client waited \(longestStoppedGap) between two replies while the subscriber was stopped")
        func list<T>(_ values: [T]) -> String { values.map { "\($0)" }.joined(separator: ",") }
        ReliabilitySizes.report(
            "stuck stop=\(phase.milliseconds)ms rounds=\(rounds) clients=\(clients) window=\(window) events_while_stopped=\(list(stoppedEvents)) throughput_without_stuck=\(list(without.map { Int($0) }))/s throughput_with_stuck=\(list(with.map { Int($0) }))/s ratio=\(String(format: "%.3f", ratio)) bound=\(bound) longest_reply_gap_ms=\(list(longestGaps.map(\.milliseconds))) other_current_after_ms=\(list(otherLags)) stuck_noticed_gap=\(list(noticedGaps)) stuck_converged_after_ms=\(list(convergences)) service_cpu_per_toggle=\(cpuPerToggle.joined(separator: ",")) service_rss_kib=\(list(memory))"
        )
    }

    // MARK: 3. Bad input at volume

    @Test(.hangGuard(minutes: 10))
    func aFloodOfBadRequestsChangesNothing() throws {
        let count = ReliabilitySizes.value("RELIABILITY_BAD_REQUESTS", default: 20_000)
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch, logLevel: "error")
        defer { service.stop() }
        try service.start()
        let control = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { control.close() }
        let before = try control.snapshot()
        let pid = try #require(service.pid)
        let memoryAtStart = try #require(ReliabilityMemory.residentKilobytes(of: pid))
        var memoryPeak = memoryAtStart

        let context = try Context()
        defer { context.terminate() }
        let dealer = try context.makeSocket(.dealer)
        defer { dealer.close() }
        try dealer.setOption(.linger, 0)
        try dealer.connect(service.commandEndpoint)

        var generator = ReliabilityBadInput(seed: UInt64.random(in: 0...UInt64.max))
        let allowedCodes: Set<String> = [
            "bad_request", "unknown_op", "index_out_of_range", "not_found", "invalid_name", "too_large",
            "duplicate", "conflict", "history_truncated",
        ]
        var sent = 0
        var answered = 0
        var badReplies: [String] = []
        var codes: [String: Int] = [:]
        var poller = Poller()
        let item = poller.add(dealer)
        let started = ContinuousClock.now
        var lastReply = started
        let window = 256
        while answered < count {
            while sent < count && sent - answered < window {
                let frames = generator.next()
                guard try dealer.send(frames, dontWait: true) else { break }
                sent += 1
            }
            let ready = try poller.poll(timeoutMilliseconds: 200)
            if ready.isReadable(item) {
                while let frames = try dealer.receive(dontWait: true) {
                    answered += 1
                    lastReply = ContinuousClock.now
                    guard let body = frames.last, let reply = try? Reply.decode(body), !reply.ok,
                        let error = reply.error, allowedCodes.contains(error.code), !error.message.isEmpty
                    else {
                        if badReplies.count < 5 {
                            badReplies.append(String(decoding: frames.last ?? Data(), as: UTF8.self))
                        }
                        continue
                    }
                    codes[error.code, default: 0] += 1
                }
            }
            if answered % 1_000 == 0, let rss = ReliabilityMemory.residentKilobytes(of: pid) {
                memoryPeak = max(memoryPeak, rss)
            }
            if ContinuousClock.now - lastReply > .seconds(10) { break }
        }
        let elapsed = ContinuousClock.now - started
        #expect(answered == count, "\(answered) of \(count) malformed requests were answered")
        #expect(badReplies.isEmpty, "replies that are not clear errors: \(badReplies)")

        // Plain REQ peers too: a multi-frame request and an empty frame get a refusal each.
        for frames in [[Data("{\"op\":".utf8), Data("\"list\"}".utf8)], [Data()]] {
            let requester = try context.makeSocket(.req)
            defer { requester.close() }
            try requester.setOption(.linger, 0)
            try requester.setOption(.receiveTimeout, Int32(5_000 * testSlowdown))
            try requester.connect(service.commandEndpoint)
            try requester.send(frames)
            let reply = try #require(try requester.receive()?.last.map { try Reply.decode($0) })
            #expect(reply.error?.code == "bad_request", "\(reply)")
        }

        // One 64 MiB message is dropped at the socket: no reply, the sender disconnected, and the
        // service does not take the message into memory.
        let memoryBeforeHuge = ReliabilityMemory.residentKilobytes(of: pid) ?? 0
        let huge = try context.makeSocket(.dealer)
        defer { huge.close() }
        try huge.setOption(.linger, 0)
        try huge.setOption(.reconnectInterval, 60_000)  // no second connection to confuse the count
        try huge.startMonitor("inproc://reliability.huge", kinds: .disconnected)
        let monitor = try context.makeSocket(.pair)
        defer { monitor.close() }
        try monitor.setOption(.receiveTimeout, Int32(10_000 * testSlowdown))
        try monitor.connect("inproc://reliability.huge")
        try huge.connect(service.commandEndpoint)
        try huge.setOption(.receiveTimeout, 2_000)  // unscaled: no reply may come
        var payload = Data(#"{"op":"add","name":""#.utf8)
        payload.append(Data(repeating: UInt8(ascii: "A"), count: 64 << 20))
        try huge.send([payload])
        payload = Data()
        let disconnected = try monitor.receive().flatMap { MonitorEvent(frames: $0) }
        #expect(disconnected?.kind == .disconnected, "the sender of 64 MiB was not disconnected")
        #expect(try huge.receive() == nil, "the 64 MiB request was answered")
        let memoryAfterHuge = ReliabilityMemory.residentKilobytes(of: pid) ?? 0
        memoryPeak = max(memoryPeak, memoryAfterHuge)

        // Nothing changed, and the service still answers.
        let after = try control.snapshot()
        #expect(after == before, "state or seq changed: seq \(before.seq) -> \(after.seq)")
        let status = try control.reply(#"{"op":"status"}"#)
        #expect(status.ok)
        let growthKiB = memoryPeak - memoryAtStart
        // AddressSanitizer keeps freed memory in quarantine (256 MiB by default), so resident
        // memory says nothing about the service there; the bound holds for real builds.
        if ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil {
            #expect(growthKiB < 64 * 1024, "the service grew by \(growthKiB) KiB")
            #expect(
                memoryAfterHuge - memoryBeforeHuge < 16 * 1024,
                "a 64 MiB message grew the service by \(memoryAfterHuge - memoryBeforeHuge) KiB")
        }
        ReliabilitySizes.report(
            "bad_input requests=\(count) answered=\(answered) elapsed=\(elapsed.milliseconds)ms rate=\(Int(Double(answered) / elapsed.timeInterval))/s codes=\(codes.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")) rss_kib start=\(memoryAtStart) peak=\(memoryPeak) before_64mib=\(memoryBeforeHuge) after_64mib=\(memoryAfterHuge) growth=\(growthKiB)"
        )
    }
}

/// Malformed requests of every kind the issue names, as the frames a DEALER sends (the service's
/// ROUTER sees them after the DEALER's routing id). None of them is a valid change.
struct ReliabilityBadInput {
    private var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    private mutating func random() -> UInt64 { generator.next() }

    private mutating func below(_ bound: Int) -> Int { generator.below(bound) }

    private mutating func bytes(_ count: Int) -> Data {
        Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random()) })
    }

    static let valid = [
        #"{"op":"toggle","index":3,"id":"abc"}"#, #"{"op":"add","name":"Atlantis","visited":true}"#,
        #"{"op":"set","name":"France","visited":false,"if_seq":7}"#, #"{"op":"remove","index":0}"#,
        #"{"op":"history","since":0}"#, #"{"op":"reset"}"#,
    ]

    /// The next malformed request.
    mutating func next() -> [Data] {
        switch below(12) {
        case 0:  // random bytes
            return [bytes(1 + below(300))]
        case 1:  // truncated JSON: a strict prefix of a valid request is never a whole object
            let text = Data(Self.valid[below(Self.valid.count)].utf8)
            return [text.prefix(below(text.count))]
        case 2:  // deeply nested
            // Mostly where the decoder's cost was cubic (up to its own limit of 512), some far
            // beyond.
            let depth = below(8) == 0 ? 513 + below(20_000) : 17 + below(496)
            let open = below(2) == 0 ? "[" : #"{"a":"#
            let close = open == "[" ? "]" : "}"
            let nested = String(repeating: open, count: depth) + String(repeating: close, count: depth)
            return [Data((below(2) == 0 ? nested : #"{"op":"toggle","index":\#(nested)}"#).utf8)]
        case 3:  // huge numbers
            let numbers = [
                "1e400", "-1e400", "99999999999999999999999999999", "18446744073709551616", "1.5", "-1",
                "9223372036854775808",
            ]
            let number = numbers[below(numbers.count)]
            let templates = [
                #"{"op":"toggle","index":N}"#, #"{"op":"history","since":N}"#,
                #"{"op":"set","index":N,"visited":true}"#,
                #"{"op":"toggle","index":0,"if_seq":N}"#, #"{"op":"get","index":N}"#, "N",
            ]
            return [Data(templates[below(templates.count)].replacingOccurrences(of: "N", with: number).utf8)]
        case 4:  // invalid UTF-8 inside a name
            var frame = Data(#"{"op":"add","name":""#.utf8)
            frame.append(
                contentsOf: [[0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80]][
                    below(4)])
            frame.append(Data(#""}"#.utf8))
            return [frame]
        case 5:  // control characters in names
            let control = String(format: "\\u%04x", below(32))
            let op = ["add", "toggle", "get", "remove"][below(4)]
            return [Data(#"{"op":"\#(op)","name":"Fr\#(control)ance"}"#.utf8)]
        case 6:  // multi-frame
            return (0..<(2 + below(3))).map { _ in Data(Self.valid[below(Self.valid.count)].utf8) }
        case 7:  // an empty frame, alone or as the body
            return below(2) == 0 ? [Data()] : [Data(), Data()]
        case 8:  // wrong types and missing fields
            let frames = [
                #"{"op":3}"#, #"{"op":"toggle"}"#, #"{"op":"toggle","index":"3"}"#,
                #"{"op":"set","index":1}"#,
                #"{"op":"add"}"#, #"{"op":"toggle","index":1,"name":"France"}"#,
                #"{"op":"toggle","index":1,"id":""}"#,
                #"{"op":"toggle","index":1,"id":7}"#, "[]", "null", #""list""#, #"{"op":"fly"}"#,
                #"{"op":"toggle","index":1,"id":"\#(String(repeating: "x", count: 65))"}"#,
            ]
            return [Data(frames[below(frames.count)].utf8)]
        case 9:  // out of range and unknown rows
            let frames = [
                #"{"op":"toggle","index":8000}"#, #"{"op":"remove","name":"Atlantis"}"#,
                #"{"op":"history","since":99999}"#,
                #"{"op":"set","index":-1,"visited":true}"#, #"{"op":"add","name":"france"}"#,
                #"{"op":"toggle","index":0,"if_seq":123456}"#,
            ]
            return [Data(frames[below(frames.count)].utf8)]
        case 10:  // too large for the decoder (but under the socket's limit)
            return [
                Data(#"{"op":"add","name":""#.utf8) + Data(repeating: 0x41, count: 70_000) + Data(#""}"#.utf8)
            ]
        default:  // overlong names and odd JSON
            let frames = [
                #"{"op":"add","name":"\#(String(repeating: "é", count: 101))"}"#,
                #"{"op":"add","name":"   "}"#,
                #"{"op":"add","name":"\#(String(repeating: "e\u{301}", count: 250))"}"#,
                #"{"op":"toggle",,"index":1}"#, #"{"op":"toggle" "index":1}"#, "{\"op\":\"list\"}\u{0}",
                #"{"op":"toggle","index":1}{"op":"toggle","index":2}"#,
            ]
            return [Data(frames[below(frames.count)].utf8)]
        }
    }
}
