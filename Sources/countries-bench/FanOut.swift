import Foundation
import LoadGeneration
import SystemSupport
import ZeroMQ

/// Fan-out figures: delivery latency (request sent to event received) over every subscriber.
struct FanOutResult: Codable, Sendable {
    var subscribers: Int
    var rate: Int
    var latency: Percentiles
    var sent: Int
    var expected: Int
    var delivered: Int
    var everyoneGotEverything: Bool
}

/// Subscribers on `events`, receiving in a few threads (at most 25 sockets each), and one paced
/// sender toggling over REQ on `command`. `bodyForSeq` makes a request from the next number;
/// `seqOfReply` reads the seq of the event the request caused (service: from the reply; floor:
/// the number itself, echoed in the published body).
func runFanOut(
    command: String, events: String, subscribers: Int, rate: Int, seconds: Double,
    body: @escaping @Sendable (UInt64) -> Data, seqOfReply: @escaping @Sendable (UInt64, Data) -> UInt64?,
    whileAttached: () -> Void = {}
) throws -> FanOutResult {
    let perThread = 25
    let threads = (subscribers + perThread - 1) / perThread
    let received = Locked<[[(UInt64, UInt64)]]>(Array(repeating: [], count: subscribers))
    let seen = Locked<Int>(0)
    let stop = Locked(false)
    let target = Locked<UInt64>(.max)
    let caughtUp = Locked<Int>(0)
    let connected = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    let context = try Context()
    defer { context.terminate() }

    for thread in 0..<threads {
        let range = (thread * perThread)..<min(subscribers, (thread + 1) * perThread)
        finished.enter()
        let worker = Thread {
            defer { finished.leave() }
            var sockets: [Socket] = []
            var poller = Poller()
            var logs: [[(UInt64, UInt64)]] = Array(repeating: [], count: range.count)
            var hasSeen = Array(repeating: false, count: range.count)
            var highest = Array(repeating: UInt64(0), count: range.count)
            var isCaughtUp = Array(repeating: false, count: range.count)
            do {
                for _ in range {
                    let socket = try context.makeSocket(.sub)
                    try socket.setOption(.linger, 0)
                    try socket.setOption(.receiveHighWaterMark, 100_000)
                    try socket.subscribe("country.")
                    try socket.connect(events)
                    poller.add(socket)
                    sockets.append(socket)
                }
            } catch {
                connected.signal()
                return
            }
            connected.signal()
            for index in logs.indices { logs[index].reserveCapacity(Int(Double(rate) * seconds) + 100) }
            while !stop.current {
                guard let ready = try? poller.poll(timeoutMilliseconds: 20) else { break }
                for (offset, socket) in sockets.enumerated() where ready.isReadable(offset) {
                    while let frames = try? socket.receive(dontWait: true) {
                        let now = nowNanos()
                        guard frames.count == 2, let seq = seqField(frames[1]) else { continue }
                        logs[offset].append((seq, now))
                        highest[offset] = max(highest[offset], seq)
                        if !hasSeen[offset] {
                            hasSeen[offset] = true
                            seen.withLock { $0 += 1 }
                        }
                    }
                }
                let goal = target.current
                for offset in sockets.indices where !isCaughtUp[offset] && highest[offset] >= goal {
                    isCaughtUp[offset] = true
                    caughtUp.withLock { $0 += 1 }
                }
            }
            let result = logs
            received.withLock { all in
                for (offset, log) in result.enumerated() { all[range.lowerBound + offset] = log }
            }
        }
        worker.stackSize = 1 << 20
        worker.start()
    }
    for _ in 0..<threads { connected.wait() }

    let sender = try context.makeSocket(.req)
    try sender.setOption(.linger, 0)
    try sender.setOption(.receiveTimeout, 5_000)
    try sender.connect(command)
    var counter: UInt64 = 0
    func toggle() throws -> (seq: UInt64, sentAt: UInt64) {
        counter += 1
        let request = body(counter)
        let sentAt = nowNanos()
        try sender.send([request])
        guard let reply = try sender.receive(), let last = reply.last,
            let seq = seqOfReply(counter, last)
        else { throw BenchError("fan-out: no usable reply within 5 s") }
        return (seq, sentAt)
    }

    // Warm up until every subscriber has an event: only then are they all connected.
    let warmupDeadline = nowNanos() + 10_000_000_000
    while seen.current < subscribers && nowNanos() < warmupDeadline {
        _ = try toggle()
        usleep(5_000)
    }
    defer {
        stop.withLock { $0 = true }
        finished.wait()
    }
    guard seen.current == subscribers else {
        throw BenchError("only \(seen.current) of \(subscribers) subscribers received anything in 10 s")
    }
    usleep(50_000)

    var sentAt: [UInt64: UInt64] = [:]
    let total = max(1, Int(Double(rate) * seconds))
    let interval = 1_000_000_000 / UInt64(rate)
    let start = nowNanos()
    for number in 0..<total {
        sleep(until: start + UInt64(number) * interval)
        let (seq, at) = try toggle()
        sentAt[seq] = at
    }
    // Let the last events arrive (at most 2 s).
    let lastSeq = sentAt.keys.max() ?? 0
    target.withLock { $0 = lastSeq }
    let drainDeadline = nowNanos() + 2_000_000_000
    while caughtUp.current < subscribers && nowNanos() < drainDeadline {
        usleep(2_000)
    }
    whileAttached()
    stop.withLock { $0 = true }
    finished.wait()

    var latencies: [UInt64] = []
    latencies.reserveCapacity(total * subscribers)
    var delivered = 0
    for log in received.current {
        for (seq, at) in log {
            guard let sent = sentAt[seq], at >= sent else { continue }
            latencies.append(at - sent)
            delivered += 1
        }
    }
    let expected = sentAt.count * subscribers
    return FanOutResult(
        subscribers: subscribers, rate: rate, latency: Percentiles(nanos: latencies), sent: sentAt.count,
        expected: expected, delivered: delivered, everyoneGotEverything: delivered == expected)
}
