import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

/// One peer cannot take the service's (or the relay's) memory, nor its time: measured from
/// /proc against the real executable. docs/RELIABILITY.md ("Bounds per peer") gives the figures.
///
/// Serialized: the memory and latency figures mean nothing if these tests compete.
@Suite(.serialized) struct BoundsTests {
    /// AddressSanitizer keeps freed memory in quarantine (256 MiB by default) and shadows every
    /// byte, so resident memory says nothing about the service there; the bounds hold for real
    /// builds, where they are asserted.
    static let measuresMemory = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil
    /// Under the sanitizers (scripts/test --sanitize) every process runs several times slower.
    static let slowdown = max(
        1, Int(ProcessInfo.processInfo.environment["COUNTRIES_TEST_SLOWDOWN"] ?? "") ?? 1)

    /// 60 subscriptions of 1 MB each from one raw XSUB socket: libzmq would keep a trie node per
    /// byte of each prefix (1.5 GiB and more before the bound).
    static let hugeSubscriptions = 60
    static let subscriptionBytes = 1_000_000

    @Test(.hangGuard())
    func hugeSubscriptionsDoNotGrowTheService() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch)
        defer { service.stop() }
        try service.start()
        let pid = try #require(service.pid)

        let growth = try BoundsFlood.subscriptions(at: service.eventsEndpoint, pid: pid)
        ReliabilitySizes.report(
            "service growth after \(Self.hugeSubscriptions) x 1 MB subscriptions: \(growth / 1024) MiB")
        if Self.measuresMemory { #expect(growth < 64 * 1024, "the service grew by \(growth / 1024) MiB") }

        // A subscriber of the protocol's topics is still served.
        let heartbeat = try BoundsFlood.firstMessage(at: service.eventsEndpoint, prefix: "heartbeat")
        #expect(heartbeat == "heartbeat")
    }

    @Test(.hangGuard())
    func hugeSubscriptionsDoNotGrowTheRelay() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch)
        defer { service.stop() }
        try service.start()
        let downstream = "ipc://\(scratch.file("relay"))"
        let relay = try ReliabilityChild(
            ["relay", "--from", service.eventsEndpoint, "--bind", downstream, "--log-level", "warning"],
            stdout: scratch.file("relay.out"), stderr: scratch.file("relay.err"))
        defer { relay.stop() }
        // Ready when a heartbeat comes through it.
        #expect(try BoundsFlood.firstMessage(at: downstream, prefix: "heart") == "heartbeat")

        let growth = try BoundsFlood.subscriptions(at: downstream, pid: relay.pid)
        ReliabilitySizes.report(
            "relay growth after \(Self.hugeSubscriptions) x 1 MB subscriptions: \(growth / 1024) MiB")
        if Self.measuresMemory { #expect(growth < 64 * 1024, "the relay grew by \(growth / 1024) MiB") }
        #expect(try BoundsFlood.firstMessage(at: downstream, prefix: "") == "heartbeat")
    }

    /// A DEALER sends 6,000 `history` requests over 5,000 kept events and never reads a reply.
    @Test(.hangGuard())
    func unreadHistoryRepliesAreBoundedAndOthersAreAnswered() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch, heartbeatMilliseconds: 1_000)
        defer { service.stop() }
        try service.start()
        let pid = try #require(service.pid)
        let seeded = try BoundsFlood.toggles(5_000, at: service.commandEndpoint)
        #expect(seeded == 5_000, "only \(seeded) toggles were acknowledged")

        let before = try #require(ProcessMemory.residentKilobytes(of: pid))
        let servedBefore = try #require(
            try ReliabilityPirate(endpoint: service.commandEndpoint).reply(#"{"op":"status"}"#).status?
                .commandsServed
        )
        let context = try Context()
        defer { context.terminate() }
        let flooder = try context.makeSocket(.dealer)
        defer { flooder.close() }
        try flooder.setOption(.linger, 0)
        try flooder.setOption(.sendHighWaterMark, 0)
        try flooder.connect(service.commandEndpoint)
        let request = Data(#"{"op":"history","since":0}"#.utf8)
        for _ in 0..<6_000 { _ = try flooder.send([Data(), request]) }

        // A second client toggles and lists throughout; its worst wait is the figure.
        let probe = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { probe.close() }
        var worst = Duration.zero
        var answered = 0
        let until = ContinuousClock.now + .seconds(12)  // unscaled: how long the load runs
        while ContinuousClock.now < until {
            let body = answered % 2 == 0 ? #"{"op":"toggle","index":1}"# : #"{"op":"list"}"#
            let started = ContinuousClock.now
            guard let frame = try? probe.request(Data(body.utf8), perTry: .seconds(3), budget: .seconds(6))
            else {
                worst = max(worst, ContinuousClock.now - started)
                break  // unanswered for 6 s: the figure is made
            }
            worst = max(worst, ContinuousClock.now - started)
            #expect(try Reply.decode(frame).ok)
            answered += 1
            usleep(20_000)
        }
        // The peak is reached once every history request has been answered (bounded).
        let watcher = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { watcher.close() }
        let floodDeadline = ContinuousClock.now + .seconds(120) * testSlowdown
        while ContinuousClock.now < floodDeadline {
            let served = try? watcher.reply(#"{"op":"status"}"#, perTry: .seconds(5), budget: .seconds(120))
            if let served = served?.status?.commandsServed, served >= servedBefore + 6_000 { break }
            usleep(500_000)
        }
        let peak = try #require(ProcessMemory.peakResidentKilobytes(of: pid))
        let growth = peak - before
        ReliabilitySizes.report(
            "history flood: peak growth \(growth / 1024) MiB, worst other-client latency \(worst.milliseconds) ms over \(answered) requests"
        )
        if Self.measuresMemory {
            #expect(growth < 256 * 1024, "the service grew by \(growth / 1024) MiB at peak")
        }
        // Before the bound the other client went unanswered for 6 s and more. On a quiet machine
        // its worst wait is 150-360 ms (the 1 s target, docs/RELIABILITY.md); a busy one (the
        // full suite beside other builds) has shown 1.0-1.2 s, so the test guards against
        // starvation with room for load, and the figure above is what to compare with 1 s.
        #expect(worst < .seconds(3) * Self.slowdown, "another client waited \(worst) for a reply")
    }

    /// Peers that send big requests faster than the loop reads them, while its commits wait on a
    /// slow disk (strace makes each `fdatasync` of the main thread take 300 ms; libzmq's I/O
    /// thread goes on reading the peers). libzmq queued 10,000 requests of each peer: four peers
    /// of 120 KB requests grew the service by 649 MiB in 6 s. Now a peer's queue is 16 MiB
    /// (`maximumQueuedRequestBytes`) and a batch's requests 4 MiB (docs/RELIABILITY.md,
    /// "Requests in bytes").
    @Test(
        .hangGuard(),
        .enabled(
            if: SyncOrderEndToEndTests.straceUsable,
            "needs strace allowed to attach (scripts/bootstrap installs it)")
    )
    func requestsQueuedFromPeersAreBoundedInBytesWhileCommitsWaitOnTheDisk() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch, heartbeatMilliseconds: 1_000)
        defer { service.stop() }
        try service.start()
        let pid = try #require(service.pid)
        // The main thread only (its id is the pid): not libzmq's threads.
        let strace = try ChildProcess(
            "strace",
            [
                "-e", "trace=fdatasync", "-e", "inject=fdatasync:delay_enter=300000", "-e", "signal=none",
                "-o", "/dev/null", "-p", "\(pid)",
            ], stdout: .discard)
        defer { _ = strace.stop(signal: SIGINT) }
        let attached = eventually(within: .seconds(10)) { strace.stderr.text.contains("attached") }
        try #require(attached, "strace did not attach: \(strace.stderr.text)")

        let before = try #require(ProcessMemory.residentKilobytes(of: pid))
        // Toggles, so that there are commits to wait on.
        let probe = try BoundsProbe.commands(
            at: service.commandEndpoint,
            asking: [#"{"op":"toggle","index":1}"#, #"{"op":"toggle","index":2}"#])
        let context = try Context()
        defer { context.terminate() }
        let peers = 4
        var flooders: [Socket] = []
        defer { for flooder in flooders { flooder.close() } }
        for _ in 0..<peers {
            let flooder = try context.makeSocket(.dealer)
            try flooder.setOption(.linger, 0)
            try flooder.setOption(.sendHighWaterMark, 16)  // this process's own queue stays small
            try flooder.connect(service.commandEndpoint)
            flooders.append(flooder)
        }
        // Under the frame limit (128 KiB), over the body limit: each is refused `too_large`.
        let request =
            Data(#"{"op":"add","name":""#.utf8) + Data(repeating: 0x61, count: 120_000) + Data(#""}"#.utf8)
        var sent = 0
        let until = ContinuousClock.now + .seconds(6)  // unscaled: how long the load runs
        while ContinuousClock.now < until {
            var progressed = false
            for flooder in flooders where (try? flooder.send([Data(), request], dontWait: true)) == true {
                sent += 1
                progressed = true
            }
            if !progressed { usleep(1_000) }
        }
        let peak = try #require(ProcessMemory.peakResidentKilobytes(of: pid))
        let (worst, answers) = try probe.stop(notBefore: .zero)
        let growth = peak - before
        ReliabilitySizes.report(
            "big requests from \(peers) peers with 300 ms syncs: \(sent) sent in 6 s, peak growth \(growth / 1024) MiB; toggles \(answers), worst wait \(worst.milliseconds) ms"
        )
        #expect(sent > peers * 128, "the peers sent only \(sent) requests: nothing was queued")
        if Self.measuresMemory {
            // 4 peers x 16 MiB, a batch's 4 MiB, and libzmq's and the allocator's overhead.
            #expect(growth < 128 * 1024, "the service grew by \(growth / 1024) MiB at peak")
        }
        #expect(worst < .seconds(3) * Self.slowdown, "a toggle waited \(worst) for its reply")
    }

    /// The issue's reproduction: the longest list the service takes (10,000 names of 100 characters
    /// of four 4-byte scalars: a `list` reply of 16 MB); one DEALER pipelines 40 `list`s and reads
    /// none while another client asks `count`. Replies were bounded in number (1,000 per peer): the
    /// service grew by 610 to 640 MiB and the other client waited 1.3 to 2.3 s. Now what a peer
    /// leaves unread is bounded in bytes, and a batch's replies too.
    @Test(.hangGuard())
    func unreadListRepliesAreBoundedInBytesAndOthersAreAnswered() throws {
        let fixture = try LongestListService()
        defer { fixture.stop() }
        let service = fixture.service
        let pid = fixture.pid
        let lister = try ReliabilityPirate(endpoint: service.commandEndpoint)
        let listBytes = try lister.request(
            Data(#"{"op":"list"}"#.utf8), perTry: .seconds(10), budget: .seconds(30)
        ).count
        lister.close()
        #expect(listBytes <= Reply.maximumBytes, "clients take replies up to Reply.maximumBytes")
        let before = try #require(ProcessMemory.residentKilobytes(of: pid))

        let context = try Context()
        defer { context.terminate() }
        let flooder = try context.makeSocket(.dealer)
        defer { flooder.close() }
        try flooder.setOption(.linger, 0)
        try flooder.setOption(.sendHighWaterMark, 0)
        try flooder.setOption(.receiveTimeout, Int32(30_000 * Self.slowdown))
        try flooder.connect(service.commandEndpoint)
        let lists = 40
        for _ in 0..<lists { _ = try flooder.send([Data(), Data(#"{"op":"list"}"#.utf8)]) }

        let probe = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { probe.close() }
        var worst = Duration.zero
        var answered = 0
        let until = ContinuousClock.now + .seconds(5)  // unscaled: how long the probe runs
        while ContinuousClock.now < until {
            let started = ContinuousClock.now
            let frame = try probe.request(
                Data(#"{"op":"count"}"#.utf8), perTry: .seconds(3), budget: .seconds(9))
            worst = max(worst, ContinuousClock.now - started)
            #expect(try Reply.decode(frame).count == Limits.maximumCountries)
            answered += 1
            usleep(20_000)
        }
        let peak = try #require(ProcessMemory.peakResidentKilobytes(of: pid))
        var codes: [String: Int] = [:]
        for _ in 0..<lists {
            let frames = try #require(try flooder.receive(), "a list reply or refusal within 30 s")
            let reply = try Reply.decode(try #require(frames.last))
            codes[reply.error?.code ?? "ok", default: 0] += 1
        }
        let growth = peak - before
        ReliabilitySizes.report(
            "list flood: list_bytes=\(listBytes) lists=\(lists) replies=\(codes) peak growth \(growth / 1024) MiB, worst other-client wait \(worst.milliseconds) ms over \(answered) requests"
        )
        #expect(codes["ok", default: 0] >= 1, "one reply always goes out: \(codes)")
        #expect(codes["ok", default: 0] + codes["too_large", default: 0] == lists, "\(codes)")
        if Self.measuresMemory {
            #expect(growth < 256 * 1024, "the service grew by \(growth / 1024) MiB at peak")
        }
        // The target is 250 ms (a release build on a quiet machine, docs/RELIABILITY.md); a debug
        // build beside other work is slower, so this guards against the old seconds-long waits.
        #expect(worst < .seconds(1) * Self.slowdown, "another client waited \(worst) for a reply")
    }

    /// 40 peers, each within its own bound: each asks for the longest list twice and reads
    /// nothing. The bound per peer (32 MiB) let each hold both replies: +1,225 MiB (30 such peers
    /// made the service hold 945 MB). Now all peers together hold at most about 256 MiB
    /// (`maximumUnreadReplyBytesInAll`): past it, those peers are not answered, a reader's `list`
    /// is refused, and readers' toggles go on (docs/RELIABILITY.md, "Replies in bytes").
    @Test(.hangGuard())
    func manyPeersThatReadNothingAreBoundedInAll() throws {
        let fixture = try LongestListService()
        defer { fixture.stop() }
        let service = fixture.service
        let pid = fixture.pid
        let before = try #require(ProcessMemory.residentKilobytes(of: pid))

        let probe = try BoundsProbe.commands(
            at: service.commandEndpoint, asking: [#"{"op":"toggle","index":1}"#, #"{"op":"count"}"#])
        let path = String(service.commandEndpoint.dropFirst("ipc://".count))
        var silent: [ZMTPPeer] = []
        defer { for peer in silent { peer.close() } }
        for _ in 0..<40 {
            let peer = try ZMTPPeer(connectingTo: path, as: "DEALER")
            silent.append(peer)
            for _ in 0..<2 { #expect(peer.send([[], Array(#"{"op":"list"}"#.utf8)])) }
        }
        let growth = try BoundsFlood.settledPeakGrowth(of: pid, since: before)
        let reader = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { reader.close() }
        let refused = try reader.reply(#"{"op":"list"}"#, perTry: .seconds(10), budget: .seconds(30))
        let (worst, answers) = try probe.stop()
        ReliabilitySizes.report(
            "40 peers x 2 longest lists unread: peak growth \(growth / 1024) MiB; a reader's list: \(refused.error?.code ?? "ok"); toggles and counts of another client: \(answers), worst wait \(worst.milliseconds) ms"
        )
        if Self.measuresMemory {
            #expect(growth < 384 * 1024, "the service grew by \(growth / 1024) MiB at peak")
        }
        #expect(refused.error?.code == "too_large", "the bound in all is reached")
        #expect(
            refused.error?.message.contains("have not read") == true,
            "\(refused.error?.message ?? "no error")")
        // Readers are never dropped: the probe's requests all came back. Quiet, its worst wait was
        // 210 to 280 ms in a debug build; with the full suite beside it, 1.06 s was seen. So this
        // guards against starvation with room for load, and the figure above is what to compare.
        #expect(worst < .seconds(3) * Self.slowdown, "another client waited \(worst) for a reply")

        // Once those peers go, libzmq lets their replies go, and big replies are answered again.
        for peer in silent { peer.close() }
        silent = []
        let deadline = ContinuousClock.now + .seconds(30) * testSlowdown
        var listed = false
        while !listed && ContinuousClock.now < deadline {
            let reply = try reader.reply(#"{"op":"list"}"#, perTry: .seconds(10), budget: .seconds(30))
            listed = reply.ok
            if !listed { usleep(100_000) }
        }
        #expect(listed, "a list is answered once the peers that read nothing are gone")
    }

    /// A subscriber of the service that stops reading (a `watch` suspended with Ctrl-Z, or a
    /// hostile one) while the longest list is reset 12 times: libzmq's queue counts messages
    /// (10,000), so the service kept every reset for it (16 MB each). Now each subscriber gets
    /// the whole stream and the publisher keeps any run of 10,001 messages within 24 MiB, as the
    /// relay does: a reset that does not fit is not published, and a subscriber that reads sees
    /// the gap and catches up from `history` (docs/RELIABILITY.md, "Each subscriber's queue, in
    /// bytes").
    @Test(.hangGuard())
    func aSubscriberThatStopsReadingCannotMakeTheServiceKeepEveryReset() throws {
        let fixture = try LongestListService()
        defer { fixture.stop() }
        let service = fixture.service
        let context = try Context()
        defer { context.terminate() }
        let reader = try BoundsFlood.reader(of: service.eventsEndpoint, in: context)
        defer { reader.close() }
        // A raw subscriber of everything reads one heartbeat, then never reads again.
        let path = String(service.eventsEndpoint.dropFirst("ipc://".count))
        var stuck: ZMTPPeer?
        defer { stuck?.close() }
        let synchronized = eventually(within: .seconds(15), every: .milliseconds(100)) {
            if stuck == nil, let peer = try? ZMTPPeer(connectingTo: path, as: "SUB"), peer.sendFrame([1]) {
                stuck = peer
            }
            return stuck?.receive(within: .milliseconds(200)) != nil
        }
        guard synchronized else { throw ReliabilityError("the stuck subscriber never got a heartbeat") }
        while (try? reader.receive(dontWait: true)) ?? nil != nil {}

        let client = try ReliabilityPirate(endpoint: service.commandEndpoint)
        defer { client.close() }
        func reset(_ index: Int) throws {
            // Not decoded: the reply is the whole list (16 MB), and "ok" comes after it.
            let frame = try client.request(
                Data(#"{"op":"reset","id":"reset-\#(index)"}"#.utf8), perTry: .seconds(20),
                budget: .seconds(60))
            let tail = String(decoding: frame.suffix(200), as: UTF8.self)
            #expect(tail.contains(#""ok":true"#), "reset \(index): \(tail)")
        }
        // The first resets make what any reset needs (its encodings, the reply's buffers): the
        // peak after them is the baseline, so what grows after is what is kept.
        for index in 0..<4 { try reset(index) }
        let before = try #require(ProcessMemory.peakResidentKilobytes(of: fixture.pid))
        let resets = 12
        for index in 4..<(4 + resets) { try reset(index) }
        var toggled: Set<UInt64> = []
        for index in 0..<20 {
            let reply = try client.reply(#"{"op":"toggle","index":\#(index)}"#)
            if let seq = reply.seq { toggled.insert(seq) }
        }
        var large = 0
        var seen: Set<UInt64> = []
        let deadline = ContinuousClock.now + .seconds(20) * testSlowdown
        while !toggled.isSubset(of: seen) && ContinuousClock.now < deadline {
            guard let frames = try reader.receive(), frames.count == 2 else { continue }
            if frames[1].count > 1_000_000 { large += 1 }
            if frames[0] == Data(Topic.countryChanged.rawValue.utf8), let event = try? Event.decode(frames[1])
            {
                seen.insert(event.seq)
            }
        }
        let growth = try BoundsFlood.settledPeakGrowth(of: fixture.pid, since: before)
        ReliabilitySizes.report(
            "service after 4 + \(resets) resets of the longest list, one subscriber not reading: peak growth over the last \(resets) \(growth / 1024) MiB; the reader got \(large) of them and \(seen.count) of the \(toggled.count) toggles after"
        )
        // Kept for the stopped subscriber, the 12 resets were 183 MiB; what is left is the
        // store's work on them (its trims for bytes write the rows and read a reset back).
        if Self.measuresMemory {
            #expect(growth < 96 * 1024, "the service grew by \(growth / 1024) MiB at peak")
        }
        #expect(large >= 1, "a reset of the largest list still goes out")
        #expect(toggled.count == 20)
        #expect(toggled.isSubset(of: seen), "the events after the resets reach the reader")
        // The last reset was not published, and is in `history`: a reader that saw the gap
        // catches up there (the older resets are past the store's 64 MiB of kept events).
        let lastReset = try #require(toggled.min()) - 1
        let page = try client.request(
            Data(#"{"op":"history","since":\#(lastReset - 1)}"#.utf8), perTry: .seconds(20),
            budget: .seconds(60))
        #expect(
            String(decoding: page.prefix(40), as: UTF8.self).hasPrefix(#"{"events":[{"countries":["#),
            "the page starts with the reset")
        #expect(String(decoding: page.suffix(200), as: UTF8.self).contains(#""ok":true"#))
    }

    // MARK: - Many small subscriptions from one connection

    /// 40,000 distinct subscriptions of 500 bytes from one connection: each under the 512-byte
    /// message bound, so libzmq took them all (+642 MiB in the issue).
    static let distinctSubscriptions = 40_000
    static let distinctSubscriptionBytes = 500

    @Test(.hangGuard())
    func manyDistinctSubscriptionsDropTheirConnectionNotTheService() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch)
        defer { service.stop() }
        try service.start()
        let pid = try #require(service.pid)
        let before = try #require(ProcessMemory.residentKilobytes(of: pid))

        let probe = try BoundsProbe.commands(at: service.commandEndpoint)
        let outcome = try BoundsFlood.distinctSubscriptions(
            Self.distinctSubscriptions, bytes: Self.distinctSubscriptionBytes, at: service.eventsEndpoint)
        let (worst, answers) = try probe.stop()
        let growth = try BoundsFlood.settledPeakGrowth(of: pid, since: before)
        ReliabilitySizes.report(
            "service after \(Self.distinctSubscriptions) distinct \(Self.distinctSubscriptionBytes)-byte subscriptions: the first connection \(outcome.firstDropped ? "dropped" : "not dropped") after \(outcome.firstSent), \(outcome.connections) connections in all; growth \(growth / 1024) MiB; count/list worst wait \(worst.milliseconds) ms over \(answers)"
        )
        #expect(outcome.firstDropped, "the connection was not dropped")
        #expect(outcome.firstSent < Self.distinctSubscriptions)
        if Self.measuresMemory { #expect(growth < 64 * 1024, "the service grew by \(growth / 1024) MiB") }
        // The target is 250 ms; the bound leaves room for a loaded machine (see the figure).
        #expect(worst < .seconds(1) * Self.slowdown, "another client waited \(worst)")
        #expect(try BoundsFlood.firstMessage(at: service.eventsEndpoint, prefix: "heartbeat") == "heartbeat")
        #expect(scratch.read("serve.err").contains("dropped a subscriber"))
    }

    @Test(.hangGuard())
    func manyDistinctSubscriptionsDropTheirConnectionNotTheRelay() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch)
        defer { service.stop() }
        try service.start()
        let downstream = "ipc://\(scratch.file("relay"))"
        let relay = try ReliabilityChild(
            ["relay", "--from", service.eventsEndpoint, "--bind", downstream, "--log-level", "warning"],
            stdout: scratch.file("relay.out"), stderr: scratch.file("relay.err"))
        defer { relay.stop() }
        // A subscriber of the relay measures the gaps between heartbeats (100 ms apart).
        let probe = try BoundsProbe.events(at: downstream)
        let before = try #require(ProcessMemory.residentKilobytes(of: relay.pid))
        let outcome = try BoundsFlood.distinctSubscriptions(
            Self.distinctSubscriptions, bytes: Self.distinctSubscriptionBytes, at: downstream)
        let (worst, answers) = try probe.stop()
        let growth = try BoundsFlood.settledPeakGrowth(of: relay.pid, since: before)
        ReliabilitySizes.report(
            "relay after \(Self.distinctSubscriptions) distinct \(Self.distinctSubscriptionBytes)-byte subscriptions: the first connection \(outcome.firstDropped ? "dropped" : "not dropped") after \(outcome.firstSent), \(outcome.connections) connections in all; growth \(growth / 1024) MiB; another subscriber's longest gap \(worst.milliseconds) ms over \(answers) messages"
        )
        #expect(outcome.firstDropped, "the connection was not dropped")
        #expect(outcome.firstSent < Self.distinctSubscriptions)
        if Self.measuresMemory { #expect(growth < 64 * 1024, "the relay grew by \(growth / 1024) MiB") }
        #expect(worst < .seconds(1) * Self.slowdown, "another subscriber waited \(worst)")
        #expect(scratch.read("relay.err").contains("dropped a subscriber"))
    }

    // MARK: - What a publisher sends through a relay

    /// 120 frames of 8 MiB (the issue's figure: +968 to 1,016 MiB with one subscriber that never
    /// reads), in every shape: alone, under a topic they are too large for, three frames, and
    /// as the body of a reset (the protocol's shape, and small enough); with small malformed
    /// messages among them. A subscriber that reads gets the well-formed events sent after.
    @Test(.hangGuard())
    func aPublisherCannotMakeTheRelayHoldMoreThanItsBudgetPerSubscriber() throws {
        let eight = [UInt8](repeating: UInt8(ascii: " "), count: 8 << 20)
        var reset = eight
        reset[0] = UInt8(ascii: "{")
        reset[reset.count - 1] = UInt8(ascii: "}")
        let topic = { (topic: Topic) in Array(topic.rawValue.utf8) }
        let heartbeat = Array(Heartbeat(seq: 1).encoded())
        let shapes: [[[UInt8]]] = [
            [eight], [topic(.countryChanged), eight], [topic(.countriesReset), reset, []],
            [topic(.countriesReset), reset],
            [topic(.heartbeat)], [Array("weather".utf8), heartbeat], [topic(.heartbeat), Array("[1]".utf8)],
            [topic(.heartbeat), heartbeat, heartbeat],
        ]
        let figures = try BoundsRelay.flood(
            (0..<120).map { shapes[$0 % 4] } + (0..<40).map { shapes[4 + $0 % 4] })
        ReliabilitySizes.report(
            "relay after 120 frames of 8 MiB and 40 small malformed messages, one subscriber not reading: growth \(figures.growth / 1024) MiB; the other got \(figures.large) of the 8 MiB resets and the \(figures.after) events after"
        )
        if Self.measuresMemory {
            #expect(figures.growth < 64 * 1024, "the relay grew by \(figures.growth / 1024) MiB")
        }
        #expect(figures.after == BoundsRelay.eventsAfter)
        #expect(figures.large >= 1)
        #expect(figures.log.contains("did not forward a message from upstream"))
    }

    /// The largest event the service can publish (a reset of 10,000 names of 400 four-byte
    /// scalars: 16 MB), 12 times: it is forwarded while no subscriber can be left holding more
    /// than 24 MiB, and dropped (for everyone; they catch up from the service) when it would be.
    @Test(.hangGuard())
    func theLargestEventRepeatedKeepsTheRelayWithinItsBudget() throws {
        let names = longestNames(
            count: Limits.maximumCountries, characters: Limits.maximumNameLength,
            scalars: Limits.maximumNameScalars)
        let rows = names.enumerated().map {
            IndexedCountry(index: $0.offset, name: $0.element, visited: false)
        }
        let body = Array(
            Event(seq: 1, kind: .reset(rows), store: String(repeating: "a", count: 32)).encoded())
        let figures = try BoundsRelay.flood(
            Array(repeating: [Array(Topic.countriesReset.rawValue.utf8), body], count: 12))
        ReliabilitySizes.report(
            "relay after 12 resets of \(body.count) bytes, one subscriber not reading: growth \(figures.growth / 1024) MiB; the other got \(figures.large) of them and the \(figures.after) events after"
        )
        if Self.measuresMemory {
            #expect(figures.growth < 64 * 1024, "the relay grew by \(figures.growth / 1024) MiB")
        }
        #expect(figures.large >= 1)
        #expect(figures.after == BoundsRelay.eventsAfter)
    }

    /// A publisher faster than a subscriber decodes (here legal resets of 10,000 names of 100
    /// characters, 1.4 MB each, as fast as libzmq sends them, while the command endpoint never
    /// answers, so every event waits): `watch` grew by 1.3 GiB in 12 s, 110 MiB a second, as
    /// libzmq queued up to 100,000 messages (a release build, a Python publisher). Now a thread
    /// moves them into a queue bounded in bytes (32 MiB) and the waiting events are bounded too
    /// (64 MiB as encoded): 180 MiB at peak here, 2,009 MiB before (docs/RELIABILITY.md,
    /// section 2).
    @Test(.hangGuard())
    func aPublisherFasterThanAWatchDecodesCannotGrowIt() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let context = try Context()
        defer { context.terminate() }
        let publisher = try context.makeSocket(.xpub)
        defer { publisher.close() }
        try publisher.setOption(.linger, 0)
        let events = "ipc://\(scratch.file("events"))"
        try publisher.bind(events)
        // Nothing listens here: the watch's `list` is never answered.
        let watch = try ReliabilityChild(
            ["watch", "--command", "ipc://\(scratch.file("nobody"))", "--events", events],
            stdout: scratch.file("watch.out"), stderr: scratch.file("watch.err"))
        defer { watch.stop() }
        try publisher.setOption(.receiveTimeout, Int32(15_000 * Self.slowdown))
        try #require(try publisher.receive() != nil, "the watch never subscribed")

        let rows = (0..<Limits.maximumCountries).map {
            IndexedCountry(index: $0, name: "N\($0)" + String(repeating: "a", count: 94), visited: false)
        }
        let topic = Data(Topic.countriesReset.rawValue.utf8)
        // Encoded once; each send writes its own seq (ten digits, the same length) in place.
        let firstSeq: UInt64 = 1_000_000_000
        var body = Event(seq: firstSeq, kind: .reset(rows), store: "hostile").encoded()
        let seqField = try #require(body.range(of: Data("\"seq\":\(firstSeq)".utf8)))
        let digits = seqField.upperBound - 10..<seqField.upperBound
        let before = try #require(ProcessMemory.residentKilobytes(of: watch.pid))
        var sent = 0
        let until = ContinuousClock.now + .seconds(6)  // unscaled: how long the load runs
        while ContinuousClock.now < until && sent < 5_000 {
            body.replaceSubrange(digits, with: Data(String(firstSeq + UInt64(sent)).utf8))
            _ = try publisher.send([topic, body])
            sent += 1
        }
        let growth = try BoundsFlood.settledPeakGrowth(of: watch.pid, since: before)
        ReliabilitySizes.report(
            "watch after \(sent) resets of 1.4 MB in 6 s, its list never answered: peak growth \(growth / 1024) MiB"
        )
        #expect(watch.isRunning, "the watch ended: \(scratch.read("watch.err"))")
        let said = eventually(within: .seconds(10)) { scratch.read("watch.err").contains("fell behind: ") }
        #expect(said, "the watch did not say it dropped events: \(scratch.read("watch.err"))")
        #expect(sent >= 100, "only \(sent) resets were sent")
        if Self.measuresMemory {
            // 32 MiB waiting, as much again taken and being decoded, 64 MiB of decoded events
            // (as encoded; half as much again as rows), and the allocator's slack.
            #expect(growth < 256 * 1024, "the watch grew by \(growth / 1024) MiB at peak")
        }
    }
}
