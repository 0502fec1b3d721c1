import Foundation
@preconcurrency import Glibc

/// Monotonic nanoseconds.
@inline(__always) func nowNanos() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Sleeps until the monotonic clock reads `deadline` (nanoseconds).
func sleep(until deadline: UInt64) {
    let now = nowNanos()
    guard deadline > now else { return }
    let wait = deadline - now
    var request = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// Runs `count` threads (real ones: each load client owns its socket) and waits for all.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// Lets every thread start its timed part together.
final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting = 0
    private let parties: Int
    private var generation = 0

    init(parties: Int) { self.parties = parties }

    /// Waits for the others, at most `timeout` seconds; false if they did not all come.
    @discardableResult
    func wait(timeout: TimeInterval = 30) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let mine = generation
        waiting += 1
        if waiting == parties {
            waiting = 0
            generation += 1
            condition.broadcast()
            return true
        }
        let limit = Date(timeIntervalSinceNow: timeout)
        while generation == mine {
            if !condition.wait(until: limit) { return false }
        }
        return true
    }
}

/// Latency figures in microseconds.
struct Percentiles: Codable, Sendable {
    var count: Int
    var p50: Double
    var p99: Double
    var max: Double

    init(nanos samples: [UInt64]) {
        let sorted = samples.sorted()
        count = sorted.count
        func at(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return Double(sorted[Swift.max(0, index)]) / 1000
        }
        p50 = at(0.5)
        p99 = at(0.99)
        self.max = at(1)
    }
}

/// The median of some nanosecond samples, in milliseconds.
func medianMilliseconds(_ samples: [UInt64]) -> Double {
    Percentiles(nanos: samples).p50 / 1000
}

/// Why a scenario could not run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A tcp port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket(): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else { throw BenchError("bind(): \(String(cString: strerror(errno)))") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The unsigned number after `"seq":` in a JSON body, without decoding the whole of it.
func seqField(_ body: Data) -> UInt64? {
    let key = Array("\"seq\":".utf8)
    return body.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> UInt64? in
        let bytes = raw.bindMemory(to: UInt8.self)
        guard bytes.count > key.count else { return nil }
        var index = 0
        outer: while index + key.count < bytes.count {
            for offset in 0..<key.count where bytes[index + offset] != key[offset] {
                index += 1
                continue outer
            }
            var position = index + key.count
            while position < bytes.count && bytes[position] == UInt8(ascii: " ") { position += 1 }
            var value: UInt64 = 0
            var digits = 0
            while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 {
                value = value * 10 + UInt64(bytes[position] - 48)
                position += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        return nil
    }
}
