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

    @Test(.timeLimit(.minutes(3)))
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

    @Test(.timeLimit(.minutes(3)))
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
    @Test(.timeLimit(.minutes(5)))
    func unreadHistoryRepliesAreBoundedAndOthersAreAnswered() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let service = ReliabilityService(scratch: scratch, heartbeatMilliseconds: 1_000)
        defer { service.stop() }
        try service.start()
        let pid = try #require(service.pid)
        let seeded = try BoundsFlood.toggles(5_000, at: service.commandEndpoint)
        #expect(seeded == 5_000, "only \(seeded) toggles were acknowledged")

        let before = try #require(BoundsMemory.kilobytes(of: pid, "VmRSS"))
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
        let until = ContinuousClock.now + .seconds(12)
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
        let floodDeadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < floodDeadline {
            let served = try? watcher.reply(#"{"op":"status"}"#, perTry: .seconds(5), budget: .seconds(120))
            if let served = served?.status?.commandsServed, served >= servedBefore + 6_000 { break }
            usleep(500_000)
        }
        let peak = try #require(BoundsMemory.kilobytes(of: pid, "VmHWM"))
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

    /// The issue's reproduction: the longest list the service takes (10,000 names of 100
    /// characters of four 4-byte scalars: a `list` reply of 16 MB); one DEALER pipelines 40 `list`s and
    /// reads none while another client asks `count`. Replies were bounded in number (1,000 per
    /// peer): the service grew by 610 to 640 MiB and the other client waited 1.3 to 2.3 s. Now
    /// what a peer leaves unread is bounded in bytes, and a batch's replies too.
    @Test(.timeLimit(.minutes(3)))
    func unreadListRepliesAreBoundedInBytesAndOthersAreAnswered() throws {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let seed = scratch.file("longest.txt")
        // 100 characters of 4 scalars of 4 bytes each (a letter and three combining stems):
        // 1,600 bytes, the most a name may take.
        let widest = "\u{1D538}\u{1D165}\u{1D165}\u{1D165}"
        let names = (0..<Limits.maximumCountries).map { number in
            let digits = String(number)
            return digits + String(repeating: widest, count: Limits.maximumNameLength - digits.count)
        }
        try Data((names.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: seed))
        let service = ReliabilityService(
            scratch: scratch, heartbeatMilliseconds: 1_000, extraArguments: ["--seed", seed])
        defer { service.stop() }
        try service.start()
        let pid = try #require(service.pid)
        let lister = try ReliabilityPirate(endpoint: service.commandEndpoint)
        let listBytes = try lister.request(
            Data(#"{"op":"list"}"#.utf8), perTry: .seconds(10), budget: .seconds(30)
        ).count
        lister.close()
        let before = try #require(BoundsMemory.kilobytes(of: pid, "VmRSS"))

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
        let until = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < until {
            let started = ContinuousClock.now
            let frame = try probe.request(
                Data(#"{"op":"count"}"#.utf8), perTry: .seconds(3), budget: .seconds(9))
            worst = max(worst, ContinuousClock.now - started)
            #expect(try Reply.decode(frame).count == Limits.maximumCountries)
            answered += 1
            usleep(20_000)
        }
        let peak = try #require(BoundsMemory.kilobytes(of: pid, "VmHWM"))
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
}

/// Memory figures of a process from /proc/PID/status, in KiB.
enum BoundsMemory {
    static func kilobytes(of pid: pid_t, _ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return nil
        }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}

/// The floods, from raw sockets.
enum BoundsFlood {
    /// Sends ``BoundsTests/hugeSubscriptions`` distinct 1 MB subscriptions to the ipc
    /// `endpoint` as an XSUB peer speaking ZMTP itself (libzmq's own XSUB would keep each prefix
    /// in a trie on this side too), reconnecting when the peer hangs up, and returns how much
    /// `pid`'s peak resident memory rose, in KiB.
    static func subscriptions(at endpoint: String, pid: pid_t) throws -> Int {
        let before = try #require(BoundsMemory.kilobytes(of: pid, "VmRSS"))
        let path = String(endpoint.dropFirst("ipc://".count))
        var generator = SystemRandomNumberGenerator()
        var peer = try BoundsZMTPPeer(path: path)
        defer { peer.close() }
        for _ in 0..<BoundsTests.hugeSubscriptions {
            var message = [UInt8](repeating: 0, count: BoundsTests.subscriptionBytes + 1)
            message[0] = 1  // subscribe
            for index in stride(from: 1, to: message.count, by: 8) {
                message[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if !peer.sendFrame(message) {
                peer.close()
                peer = try BoundsZMTPPeer(path: path)  // refused: the next one on a new connection
            }
        }
        // Let the peer take them in (or refuse them), then read its peak.
        var previous = -1
        for _ in 0..<40 {
            usleep(250_000)
            guard let now = BoundsMemory.kilobytes(of: pid, "VmHWM") else { break }
            if now == previous { break }
            previous = now
        }
        let peak = try #require(BoundsMemory.kilobytes(of: pid, "VmHWM"))
        return peak - before
    }

    /// The topic of the first message a fresh SUB of `prefix` gets from `endpoint` (bounded).
    static func firstMessage(at endpoint: String, prefix: String) throws -> String? {
        let context = try Context()
        defer { context.terminate() }
        let sub = try context.makeSocket(.sub)
        defer { sub.close() }
        try sub.setOption(.linger, 0)
        try sub.setOption(.receiveTimeout, 15_000)
        try sub.subscribe(prefix)
        try sub.connect(endpoint)
        guard let frames = try sub.receive(), let topic = frames.first else { return nil }
        return String(decoding: topic, as: UTF8.self)
    }

    /// Pipelines `count` toggles over a DEALER (256 in flight) over the 8 seed countries; returns how many succeeded.
    static func toggles(_ count: Int, at endpoint: String) throws -> Int {
        let context = try Context()
        defer { context.terminate() }
        let dealer = try context.makeSocket(.dealer)
        defer { dealer.close() }
        try dealer.setOption(.linger, 0)
        try dealer.setOption(.receiveTimeout, 20_000)
        try dealer.connect(endpoint)
        var sent = 0
        var ok = 0
        var received = 0
        while received < count {
            while sent < count && sent - received < 256 {
                _ = try dealer.send([Data(), Data(#"{"op":"toggle","index":\#(sent % 8)}"#.utf8)])
                sent += 1
            }
            guard let frames = try dealer.receive(), let body = frames.last else { break }
            received += 1
            if (try? Reply.decode(body))?.ok == true {
                ok += 1
            } else if received - ok < 3 {
                print("toggle refused: \(String(decoding: body, as: UTF8.self))")
            }
        }
        return ok
    }
}

/// An XSUB peer that speaks ZMTP 3.0 (NULL mechanism) over a Unix socket by hand: it sends
/// what it is told and keeps nothing, and never reads (the peer sends it next to nothing).
struct BoundsZMTPPeer {
    private var descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ReliabilityError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            throw ReliabilityError("connect \(path): \(String(cString: strerror(errno)))")
        }
        // Greeting: signature, version 3.0, NULL, as-server 0, filler; then READY as an XSUB.
        var greeting: [UInt8] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3, 0]
        greeting +=
            Array("NULL".utf8) + [UInt8](repeating: 0, count: 16) + [0] + [UInt8](repeating: 0, count: 31)
        let ready: [UInt8] =
            [5] + Array("READY".utf8) + [11] + Array("Socket-Type".utf8) + [0, 0, 0, 4] + Array("XSUB".utf8)
        guard write(greeting), write([0x04, UInt8(ready.count)] + ready) else {
            Glibc.close(descriptor)
            throw ReliabilityError("the ZMTP handshake with \(path) failed")
        }
    }

    /// Sends one message frame; false when the peer hung up.
    func sendFrame(_ body: [UInt8]) -> Bool {
        var header: [UInt8] = [0x02]  // long frame, last
        for shift in stride(from: 56, through: 0, by: -8) {
            header.append(UInt8(truncatingIfNeeded: body.count >> shift))
        }
        return write(header) && write(body)
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    mutating func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
