import CountriesCore
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing
import ZeroMQ

// Helpers of BoundsTests: peers that speak ZMTP by hand, the floods they send, and the figures.

/// One ZMTP 3.0 connection (NULL mechanism) spoken by hand over a Unix socket: a peer that
/// keeps nothing and reads only when told, as no libzmq socket can (a libzmq SUB reads all it
/// can into its own queue, and an XSUB keeps every subscription it sends in a trie of its own).
///
/// Every read and write is bounded in time, so a test cannot hang on one.
final class ZMTPPeer {
    private(set) var descriptor: Int32

    /// Connects to `path` as a socket of `type` (`"XSUB"`, `"SUB"`) and completes the handshake.
    convenience init(connectingTo path: String, as type: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ReliabilityError("socket: \(String(cString: strerror(errno)))") }
        var address = ZMTPPeer.unixAddress(path)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            throw ReliabilityError("connect \(path): \(String(cString: strerror(errno)))")
        }
        try self.init(descriptor: descriptor, as: type)
    }

    /// Takes a connected descriptor (closed by ``close()``) and completes the handshake.
    init(descriptor: Int32, as type: String) throws {
        self.descriptor = descriptor
        var timeout = timeval(tv_sec: 30 * testSlowdown, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            setsockopt(descriptor, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        // Greeting: signature, version 3.0, NULL, as-server 0, filler; then READY.
        var greeting: [UInt8] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3, 0]
        greeting +=
            Array("NULL".utf8) + [UInt8](repeating: 0, count: 16) + [0] + [UInt8](repeating: 0, count: 31)
        let ready: [UInt8] =
            [5] + Array("READY".utf8) + [11] + Array("Socket-Type".utf8)
            + [0, 0, 0, UInt8(type.utf8.count)] + Array(type.utf8)
        // The peer's greeting and READY are read before anything else is sent: libzmq refuses a
        // message that arrives before it has sent its own READY ("unexpected command").
        guard write(greeting), write([0x04, UInt8(ready.count)] + ready), read(64) != nil,
            let command = readFrame(), command.isCommand
        else {
            close()
            throw ReliabilityError("the ZMTP handshake failed")
        }
    }

    deinit { close() }

    /// Sends one message of these frames; false when the peer hung up (or the write timed out).
    func send(_ frames: [[UInt8]]) -> Bool {
        for (index, body) in frames.enumerated() {
            var header: [UInt8] = [index < frames.count - 1 ? 0x03 : 0x02]  // long frame, more or last
            for shift in stride(from: 56, through: 0, by: -8) {
                header.append(UInt8(truncatingIfNeeded: body.count >> shift))
            }
            guard write(header), write(body) else { return false }
        }
        return true
    }

    /// Sends a one-frame message.
    func sendFrame(_ body: [UInt8]) -> Bool { send([body]) }

    /// The next message, commands (heartbeats) skipped; nil at the end of the stream or after
    /// the read timeout.
    func receive() -> [[UInt8]]? {
        var frames: [[UInt8]] = []
        while let frame = readFrame() {
            if frame.isCommand { continue }
            frames.append(frame.body)
            if !frame.more { return frames }
        }
        return nil
    }

    /// The next message if one starts to arrive within `limit`.
    func receive(within limit: Duration) -> [[UInt8]]? {
        var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&item, 1, Int32(limit.milliseconds)) == 1 else { return nil }
        return receive()
    }

    /// Whether the peer has closed the connection (waits up to `limit` for it).
    func closedByPeer(within limit: Duration) -> Bool {
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        return eventually(within: limit, every: .milliseconds(1)) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            return count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR)
        }
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    // MARK: Frames

    private struct Frame {
        var flags: UInt8
        var body: [UInt8]
        var more: Bool { flags & 0x01 != 0 }
        var isCommand: Bool { flags & 0x04 != 0 }
    }

    private func readFrame() -> Frame? {
        guard let flags = read(1)?.first else { return nil }
        let size: Int
        if flags & 0x02 != 0 {
            guard let bytes = read(8) else { return nil }
            size = bytes.reduce(0) { $0 << 8 | Int($1) }
        } else {
            guard let byte = read(1)?.first else { return nil }
            size = Int(byte)
        }
        guard let body = read(size) else { return nil }
        return Frame(flags: flags, body: body)
    }

    private func read(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = bytes.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress! + offset, count - offset, 0)
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return nil }
            offset += got
        }
        return bytes
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    static func unixAddress(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }
}

/// A Unix socket a ``ZMTPPeer`` publisher listens on (a relay's `--from`).
final class ZMTPListener {
    let path: String
    private var descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = ZMTPPeer.unixAddress(path)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard descriptor >= 0, bound == 0, listen(descriptor, 4) == 0 else {
            throw ReliabilityError("listen on \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close() }

    /// The next connection, handshaken as a socket of `type`; throws after `limit`.
    func accept(as type: String, within limit: Duration) throws -> ZMTPPeer {
        var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&item, 1, Int32((limit * testSlowdown).milliseconds)) == 1 else {
            throw ReliabilityError("nobody connected to \(path) within \(limit)")
        }
        let connection = Glibc.accept(descriptor, nil, nil)
        guard connection >= 0 else { throw ReliabilityError("accept: \(String(cString: strerror(errno)))") }
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)  // not into the processes other tests start
        return try ZMTPPeer(descriptor: connection, as: type)
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}

/// The floods, from raw sockets.
enum BoundsFlood {
    /// Sends ``BoundsTests/hugeSubscriptions`` distinct 1 MB subscriptions to the ipc
    /// `endpoint` as an XSUB peer speaking ZMTP itself, reconnecting when the peer hangs up,
    /// and returns how much `pid`'s peak resident memory rose, in KiB.
    static func subscriptions(at endpoint: String, pid: pid_t) throws -> Int {
        let before = try #require(ProcessMemory.residentKilobytes(of: pid))
        let path = String(endpoint.dropFirst("ipc://".count))
        var generator = SystemRandomNumberGenerator()
        var peer = try ZMTPPeer(connectingTo: path, as: "XSUB")
        defer { peer.close() }
        for _ in 0..<BoundsTests.hugeSubscriptions {
            var message = [UInt8](repeating: 0, count: BoundsTests.subscriptionBytes + 1)
            message[0] = 1  // subscribe
            for index in stride(from: 1, to: message.count, by: 8) {
                message[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if !peer.sendFrame(message) {
                // Refused: the next one on a new connection.
                peer.close()
                peer = try ZMTPPeer(connectingTo: path, as: "XSUB")
            }
        }
        return try settledPeakGrowth(of: pid, since: before)
    }

    /// What ``distinctSubscriptions(_:bytes:at:)`` did.
    struct Outcome {
        /// Subscriptions the first connection could send before it ended.
        var firstSent: Int
        /// Whether the peer dropped the first connection.
        var firstDropped: Bool
        /// Connections it took to send them all.
        var connections: Int
    }

    /// Sends `count` distinct subscriptions of `bytes` bytes each (none a prefix of a topic)
    /// as an XSUB peer speaking ZMTP itself: from one connection until the peer hangs up, then
    /// the rest from a new connection each time it does.
    static func distinctSubscriptions(_ count: Int, bytes: Int, at endpoint: String) throws -> Outcome {
        let path = String(endpoint.dropFirst("ipc://".count))
        var peer = try ZMTPPeer(connectingTo: path, as: "XSUB")
        defer { peer.close() }
        var message = [UInt8](repeating: UInt8(ascii: "x"), count: bytes + 1)
        message[0] = 1  // subscribe
        var first: (sent: Int, dropped: Bool)?
        var connections = 1
        var index = 0
        while index < count {
            // Distinct in their first bytes, so that each costs libzmq a node per byte.
            withUnsafeBytes(of: UInt32(index).littleEndian) { message.replaceSubrange(1...4, with: $0) }
            if peer.sendFrame(message) {
                index += 1
                continue
            }
            if first == nil { first = (index, peer.closedByPeer(within: .seconds(5))) }
            peer.close()
            // What the dropped connection sent before it went may be read after this one took
            // its descriptor: from the same process, it is dropped too, even in its handshake.
            for attempt in 1...100 {
                connections += 1
                if let next = try? ZMTPPeer(connectingTo: path, as: "XSUB") {
                    peer = next
                    break
                }
                if attempt == 100 {
                    throw ReliabilityError("100 connections in a row failed their handshake")
                }
            }
        }
        if first == nil { first = (count, peer.closedByPeer(within: .seconds(5))) }
        return Outcome(
            firstSent: first?.sent ?? 0, firstDropped: first?.dropped ?? false, connections: connections)
    }

    /// A SUB of every topic at `endpoint` that queues all it gets (no high-water mark) and
    /// waits 500 ms at most for each message: the subscriber that reads, beside one that does not.
    static func reader(of endpoint: String, in context: Context) throws -> Socket {
        let reader = try context.makeSocket(.sub)
        try reader.setOption(.linger, 0)
        try reader.setOption(.receiveHighWaterMark, 0)
        try reader.setOption(.receiveTimeout, 500)
        try reader.subscribe("")
        try reader.connect(endpoint)
        return reader
    }

    /// How much `pid`'s peak resident memory rose since `before` (KiB of `VmRSS`), once it has
    /// stopped rising (bounded).
    static func settledPeakGrowth(of pid: pid_t, since before: Int) throws -> Int {
        var previous = -1
        for _ in 0..<40 {
            usleep(250_000)
            guard let now = ProcessMemory.peakResidentKilobytes(of: pid) else { break }
            if now == previous { break }
            previous = now
        }
        let peak = try #require(ProcessMemory.peakResidentKilobytes(of: pid))
        return peak - before
    }

    /// The topic of the first message a fresh SUB of `prefix` gets from `endpoint` (bounded).
    static func firstMessage(at endpoint: String, prefix: String) throws -> String? {
        let context = try Context()
        defer { context.terminate() }
        let sub = try context.makeSocket(.sub)
        defer { sub.close() }
        try sub.setOption(.linger, 0)
        try sub.setOption(.receiveTimeout, Int32(15_000 * testSlowdown))
        try sub.subscribe(prefix)
        try sub.connect(endpoint)
        guard let frames = try sub.receive(), let topic = frames.first else { return nil }
        return String(decoding: topic, as: UTF8.self)
    }

    /// Pipelines `count` toggles over a DEALER (256 in flight) over the 8 seed countries; returns
    /// how many succeeded.
    static func toggles(_ count: Int, at endpoint: String) throws -> Int {
        let context = try Context()
        defer { context.terminate() }
        let dealer = try context.makeSocket(.dealer)
        defer { dealer.close() }
        try dealer.setOption(.linger, 0)
        try dealer.setOption(.receiveTimeout, Int32(20_000 * testSlowdown))
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

/// Another client, on a thread of its own, that keeps asking while a flood runs: its worst wait
/// says whether the flood kept others waiting.
final class BoundsProbe: Sendable {
    private let stopped = Box(false)
    private let worst = Box(Duration.zero)
    private let answers = Box(0)
    private let failure = Box<String?>(nil)
    private let ready = DispatchSemaphore(value: 0)
    private let started = ContinuousClock.now
    private let finished = DispatchSemaphore(value: 0)

    /// `bodies` in turn (`count` and `list` unless told), 20 ms apart, over a Lazy Pirate client
    /// of `endpoint`; each wait is from the request to its reply.
    static func commands(
        at endpoint: String, asking bodies: [String] = [#"{"op":"count"}"#, #"{"op":"list"}"#]
    ) throws -> BoundsProbe {
        try BoundsProbe { probe in
            let client = try ReliabilityPirate(endpoint: endpoint)
            defer { client.close() }
            while !probe.stopped.value {
                let body = bodies[probe.answers.value % bodies.count]
                let started = ContinuousClock.now
                let frame = try client.request(Data(body.utf8), perTry: .seconds(3), budget: .seconds(6))
                guard try Reply.decode(frame).ok else { throw ReliabilityError("\(body) failed") }
                probe.answered(after: ContinuousClock.now - started)
                usleep(20_000)
            }
        }
    }

    /// A SUB of every topic at `endpoint`; each wait is the gap between two messages (the
    /// service's heartbeats come every 100 ms).
    static func events(at endpoint: String) throws -> BoundsProbe {
        try BoundsProbe { probe in
            let context = try Context()
            defer { context.terminate() }
            let sub = try context.makeSocket(.sub)
            defer { sub.close() }
            try sub.setOption(.linger, 0)
            try sub.setOption(.receiveTimeout, 500)
            try sub.subscribe("")
            try sub.connect(endpoint)
            var last: ContinuousClock.Instant?
            while !probe.stopped.value {
                guard try sub.receive() != nil else { continue }
                let now = ContinuousClock.now
                if let last { probe.answered(after: now - last) } else { probe.answered(after: .zero) }
                last = now
            }
        }
    }

    private init(_ body: @escaping @Sendable (BoundsProbe) throws -> Void) throws {
        let thread = Thread { [self] in
            do { try body(self) } catch { failure.value = "\(error)" }
            ready.signal()
            finished.signal()
        }
        thread.start()
        // Measuring starts once the probe is answered: the flood waits for that.
        guard ready.wait(timeout: .now() + .seconds(15 * testSlowdown)) == .success, failure.value == nil
        else {
            stopped.value = true
            throw ReliabilityError("the probe never got an answer: \(failure.value ?? "timed out")")
        }
    }

    private func answered(after wait: Duration) {
        if answers.update({
            $0 += 1
            return $0
        }) == 1 {
            ready.signal()
        }
        worst.update { $0 = max($0, wait) }
    }

    /// Stops the probe (bounded), once it has run for `minimum` at least, and returns its worst
    /// wait and how many answers it got; throws what stopped it early (no answer within 6 s).
    func stop(notBefore minimum: Duration = .seconds(2)) throws -> (worst: Duration, answers: Int) {
        sleep(for: started + minimum - ContinuousClock.now)
        stopped.value = true
        _ = finished.wait(timeout: .now() + .seconds(15 * testSlowdown))
        if let failure = failure.value { throw ReliabilityError("the probe failed: \(failure)") }
        return (worst.value, answers.value)
    }
}

/// A relay between a publisher that speaks ZMTP by hand and two subscribers: one that reads,
/// and one that stops reading after its first message.
enum BoundsRelay {
    /// Well-formed events sent after a flood; the reading subscriber must get them all.
    static let eventsAfter = 20

    /// What a flood did.
    struct Figures {
        /// The relay's peak resident growth, KiB.
        var growth: Int
        /// Messages over 1 MB the reading subscriber got.
        var large: Int
        /// Of ``eventsAfter``, how many it got.
        var after: Int
        /// The relay's log.
        var log: String
    }

    /// Starts `countries relay` from a publisher of ours, sends `messages` (frames each), then
    /// ``eventsAfter`` events, and measures.
    static func flood(_ messages: [[[UInt8]]]) throws -> Figures {
        let scratch = try ReliabilityScratch()
        defer { scratch.remove() }
        let listener = try ZMTPListener(path: scratch.file("pub"))
        defer { listener.close() }
        let downstream = "ipc://\(scratch.file("relay"))"
        let relay = try ReliabilityChild(
            ["relay", "--from", "ipc://\(listener.path)", "--bind", downstream, "--log-level", "warning"],
            stdout: scratch.file("relay.out"), stderr: scratch.file("relay.err"))
        defer { relay.stop() }
        let publisher = try listener.accept(as: "PUB", within: .seconds(15))
        defer { publisher.close() }

        let context = try Context()
        defer { context.terminate() }
        let reader = try BoundsFlood.reader(of: downstream, in: context)
        defer { reader.close() }
        var stuck: ZMTPPeer?
        defer { stuck?.close() }

        // Heartbeats until both subscribers get one; then the second one never reads again.
        let heartbeat = [Array(Topic.heartbeat.rawValue.utf8), Array(Heartbeat(seq: 0).encoded())]
        var readerReady = false
        var stuckReady = false
        let synchronized = eventually(within: .seconds(15), every: .milliseconds(50)) {
            if stuck == nil { stuck = try? ZMTPPeer(connectingTo: scratch.file("relay"), as: "SUB") }
            if let stuck, !stuckReady, stuck.sendFrame([1]) {}  // subscribe to everything, once
            guard publisher.send(heartbeat) else { return false }
            while (try? reader.receive(dontWait: true)) ?? nil != nil { readerReady = true }
            if let stuck, stuck.receive(within: .milliseconds(50)) != nil { stuckReady = true }
            return readerReady && stuckReady
        }
        guard synchronized else { throw ReliabilityError("the relay's subscribers never got a heartbeat") }

        let before = try #require(ProcessMemory.residentKilobytes(of: relay.pid))
        for (index, message) in messages.enumerated() where !publisher.send(message) {
            throw ReliabilityError("the relay stopped reading at message \(index + 1) of \(messages.count)")
        }
        for seq in 0..<eventsAfter {
            let row = IndexedCountry(index: 0, name: "After \(seq)", visited: true)
            let event = Event(seq: UInt64(1_000 + seq), kind: .changed(row))
            guard publisher.send([Array(Topic.countryChanged.rawValue.utf8), Array(event.encoded())]) else {
                throw ReliabilityError("the relay stopped reading before the events after")
            }
        }

        var large = 0
        var after: Set<UInt64> = []
        let deadline = ContinuousClock.now + .seconds(20 * testSlowdown)
        while after.count < eventsAfter && ContinuousClock.now < deadline {
            guard let frames = try reader.receive(), frames.count == 2 else { continue }
            if frames[1].count > 1_000_000 { large += 1 }
            if frames[0] == Data(Topic.countryChanged.rawValue.utf8), let event = try? Event.decode(frames[1])
            {
                after.insert(event.seq)
            }
        }
        let growth = try BoundsFlood.settledPeakGrowth(of: relay.pid, since: before)
        return Figures(growth: growth, large: large, after: after.count, log: scratch.read("relay.err"))
    }
}

/// A service seeded with the longest list it takes: 10,000 names of 100 characters of 4 scalars
/// of 4 bytes each (a letter and three combining stems; 1,600 bytes, the most a name may take),
/// so that its `list` reply is about 16 MB. Stopped, and its scratch removed, by ``stop()``.
final class LongestListService {
    let service: ReliabilityService
    let pid: pid_t
    private let scratch: ReliabilityScratch

    init() throws {
        scratch = try ReliabilityScratch()
        let widest = "\u{1D538}\u{1D165}\u{1D165}\u{1D165}"
        let names = (0..<Limits.maximumCountries).map { number in
            let digits = String(number)
            return digits + String(repeating: widest, count: Limits.maximumNameLength - digits.count)
        }
        service = ReliabilityService(
            scratch: scratch, heartbeatMilliseconds: 1_000,
            extraArguments: ["--seed", try scratch.seedFile("longest.txt", names: names)])
        do {
            try service.start()
            pid = try #require(service.pid)
        } catch {
            service.stop()
            scratch.remove()
            throw error
        }
    }

    func stop() {
        service.stop()
        scratch.remove()
    }
}
