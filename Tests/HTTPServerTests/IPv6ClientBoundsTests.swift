import Foundation
@preconcurrency import Glibc
import HTTPServer
import TestSupport
import Testing

/// The per-address bound takes an IPv6 client as its /64 (docs/SECURITY.md, "The web page"): a
/// host that picks a new address of its /64 for each connection gets no more than one address
/// would. On a network namespace of the test's own, whose loopback holds two /64s.
@Suite(.hangGuard())
struct IPv6ClientBoundsTests {
    /// A TCP connection from IPv6 `source` to `[host]:port`.
    private final class Connection {
        let fd: Int32
        private(set) var received = ""
        private(set) var closed = false

        init(to host: String, port: Int, from source: String) throws {
            fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw HarnessFailure("socket: errno \(errno)") }
            guard Self.address(source, port: 0, { bind(fd, $0, $1) }) == 0,
                Self.address(host, port: port, { Glibc.connect(fd, $0, $1) }) == 0
            else {
                let code = errno
                close(fd)
                throw HarnessFailure("connect from \(source) to [\(host)]:\(port): errno \(code)")
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }

        deinit { close(fd) }

        private static func address(
            _ text: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
        ) -> Int32 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, text, &address.sin6_addr) == 1 else { return -1 }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }

        /// Sends a GET that keeps the connection open.
        func get() {
            let request = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
            _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        }

        /// Reads what has come; notes a close by the server.
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count > 0 {
                    received += String(decoding: buffer[..<count], as: UTF8.self)
                } else {
                    if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { closed = true }
                    return
                }
            }
        }

        /// Whether a GET is answered (true) or the connection closed without an answer (false).
        func answered() -> Bool {
            get()
            _ = eventually(within: .seconds(5), every: .milliseconds(5)) {
                drain()
                return received.contains("\r\n\r\npage") || closed
            }
            return received.contains("200 OK")
        }
    }

    @Test func addressesOfOneSlash64CountAsOneClient() throws {
        let network = try VirtualNetwork(hosts: ["h"], links: [], prefix: "v6")
        defer { network.remove() }
        let server = "fd00:db8:0:1::1"
        let sameSlash64 = ["fd00:db8:0:1::2", "fd00:db8:0:1::3", "fd00:db8:0:1::4"]
        let otherSlash64 = "fd00:db8:0:2::2"
        for address in [server] + sameSlash64 + [otherSlash64] {
            // nodad: usable at once, not after duplicate address detection.
            try network.run(on: "h", ["-6", "addr", "add", "\(address)/64", "dev", "lo", "nodad"])
        }
        let outcome = Box<Result<[String], any Error>>(.success([]))
        let finished = DispatchSemaphore(value: 0)
        // The namespace is entered by a thread of the test's own, which ends with it.
        Thread {
            defer { finished.signal() }
            outcome.value = Result {
                try network.enter("h")
                let http = try HTTPServer(
                    host: server, port: 0, limits: HTTPServer.Limits(connectionsPerAddress: 2)
                ) { _ in .text(200, "page") }
                defer { http.stop() }
                // Two connections of the /64, from two addresses, answered and kept open.
                let held = try sameSlash64.prefix(2).map {
                    try Connection(to: server, port: http.port, from: $0)
                }
                var seen = held.map { $0.answered() ? "held" : "refused" }
                // A third address of the same /64: its client holds its two already.
                let third = try Connection(to: server, port: http.port, from: sameSlash64[2])
                seen.append(third.answered() ? "third answered" : "third refused")
                // Another /64 is another client.
                let other = try Connection(to: server, port: http.port, from: otherSlash64)
                seen.append(other.answered() ? "other answered" : "other refused")
                return seen
            }
        }.start()
        #expect(
            finished.wait(timeout: .now() + 30.0 * Double(testSlowdown)) == .success,
            "the namespace's thread did not end")
        let seen = try outcome.value.get()
        #expect(seen == ["held", "held", "third refused", "other answered"])
    }
}
