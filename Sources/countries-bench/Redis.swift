import Foundation
@preconcurrency import Glibc
import LoadGeneration
import SystemSupport

/// A minimal RESP2 client over one blocking TCP socket: enough for SCRIPT LOAD and EVALSHA.
final class RESPClient {
    /// A decoded reply.
    enum Value {
        case simple(String)
        case error(String)
        case integer(Int)
        case bulk(Data?)
        case array([Value]?)
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var position = 0

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket(): \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard IPv4SocketAddress(host: "127.0.0.1", port: port).connect(fd) else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw BenchError("connect to redis on \(port): \(message)")
        }
    }

    deinit { close(fd) }

    /// Sends one command and reads its reply.
    func call(_ arguments: [String]) throws -> Value {
        var out = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let bytes = Array(argument.utf8)
            out += Array("$\(bytes.count)\r\n".utf8) + bytes + [13, 10]
        }
        var sent = 0
        while sent < out.count {
            let n = out[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw BenchError("write to redis: \(String(cString: strerror(errno)))") }
            sent += n
        }
        return try readValue()
    }

    private func readByte() throws -> UInt8 {
        if position == buffer.count {
            buffer = [UInt8](repeating: 0, count: 16_384)
            position = 0
            var n = 0
            repeat {
                n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            } while n < 0
                && errno == EINTR
            guard n > 0 else { throw BenchError("redis closed or timed out") }
            buffer.removeSubrange(n...)
        }
        defer { position += 1 }
        return buffer[position]
    }

    private func readLine() throws -> String {
        var line: [UInt8] = []
        while true {
            let byte = try readByte()
            if byte == 13 {
                _ = try readByte()
                return String(decoding: line, as: UTF8.self)
            }
            line.append(byte)
        }
    }

    private func readValue() throws -> Value {
        let kind = try readByte()
        let line = try readLine()
        switch kind {
        case UInt8(ascii: "+"): return .simple(line)
        case UInt8(ascii: "-"): return .error(line)
        case UInt8(ascii: ":"): return .integer(Int(line) ?? 0)
        case UInt8(ascii: "$"):
            let length = Int(line) ?? -1
            guard length >= 0 else { return .bulk(nil) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            for _ in 0..<length { bytes.append(try readByte()) }
            _ = try readByte()
            _ = try readByte()
            return .bulk(Data(bytes))
        case UInt8(ascii: "*"):
            let count = Int(line) ?? -1
            guard count >= 0 else { return .array(nil) }
            return .array(try (0..<count).map { _ in try readValue() })
        default:
            throw BenchError("redis sent an unknown reply type \(kind)")
        }
    }
}

/// The Redis alternative: a private redis-server on a free port, in its own temp dir.
final class RedisUnderTest {
    /// The toggle-and-publish: flip a hash field, bump the seq, publish the event, return the
    /// reply.
    static let script = """
        local v = redis.call('HGET', KEYS[1], ARGV[1])
        local n = 1
        if v == '1' then n = 0 end
        redis.call('HSET', KEYS[1], ARGV[1], n)
        local seq = redis.call('INCR', KEYS[2])
        local visited = 'false'
        if n == 1 then visited = 'true' end
        local row = '{"index":' .. ARGV[2] .. ',"name":"' .. ARGV[1] .. '","visited":' .. visited .. '}'
        redis.call('PUBLISH', 'country.changed', '{"topic":"country.changed","seq":' .. seq .. ',"country":' .. row .. '}')
        return '{"ok":true,"seq":' .. seq .. ',"country":' .. row .. '}'
        """

    let port: Int
    let child: Child
    let sha: String

    /// Starts redis-server with `appendfsync` `always` or `no` (AOF on, no RDB snapshots).
    init(executable: String, appendfsync: String) throws {
        port = try LoopbackPort.free()
        let directory = try makeTemporaryDirectory("redis")
        child = try Child(
            name: "redis-server", executable: executable,
            arguments: [
                "--port", String(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "",
                "--appendonly", "yes", "--appendfsync", appendfsync, "--daemonize", "no",
                "--protected-mode", "yes", "--logfile", "",
            ], logPath: "\(directory)/redis.log")
        let deadline = nowNanos() + 10_000_000_000
        var client: RESPClient?
        while client == nil && nowNanos() < deadline {
            if child.hasExited { throw BenchError("redis-server exited at start; see its log") }
            client = try? RESPClient(port: port)
            if client == nil { usleep(20_000) }
        }
        guard let client else { throw BenchError("redis-server did not listen within 10 s") }
        guard case .bulk(let digest?) = try client.call(["SCRIPT", "LOAD", Self.script]) else {
            throw BenchError("redis refused the toggle script")
        }
        sha = String(decoding: digest, as: UTF8.self)
    }

    func stop() { child.stop() }

    /// The redis-server on PATH, if any.
    static func find() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/bin", "/usr/sbin", "/usr/local/bin"] {
            let candidate = "\(directory)/redis-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A Redis client toggling its own field by EVALSHA.
struct RedisToggler: RoundTripper {
    private let client: RESPClient
    private let sha: String
    private let field: String
    private let index: String

    init(port: Int, sha: String, index: Int) throws {
        client = try RESPClient(port: port)
        self.sha = sha
        field = "Country \(index % 8)"
        self.index = String(index % 8)
    }

    mutating func roundTrip() throws {
        let reply = try client.call(["EVALSHA", sha, "2", "countries", "countries:seq", field, index])
        guard case .bulk(.some) = reply else { throw BenchError("redis: unexpected reply \(reply)") }
    }
}
