import Foundation
@preconcurrency import Glibc
import LoadGeneration
import SystemSupport

/// What one `countries web` process did with many open pages (docs/BENCHMARKS.md, "Web pages").
struct WebPagesResult {
    var pages: Int
    /// Pages whose stream came up live.
    var opened: Int
    /// Per toggle, from starting `countries toggle` to each page reading its event: all pages'
    /// samples together.
    var fanOut: Percentiles
    /// Pages that missed a toggle's event within 10 s.
    var missed: Int
    /// `GET /` on a fresh connection from another address while the pages are open.
    var freshGet: Percentiles
    /// Whether a connection past one address's limit was refused while another address was
    /// answered.
    var limitHeld: Bool
    var otherAddressGet: Double?
    var idleKiB: Int?
    var openKiB: Int?
}

/// A raw client connection from a chosen loopback source address.
private func connectFrom(_ source: String, port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket(): \(String(cString: strerror(errno)))") }
    let ok =
        IPv4SocketAddress(host: source, port: 0).bind(fd)
        && IPv4SocketAddress(host: "127.0.0.1", port: port).connect(fd)
    guard ok else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw BenchError("connect from \(source): \(reason)")
    }
    return fd
}

private func sendText(_ fd: Int32, _ text: String) {
    _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
}

/// A whole `GET /` from `source`: the time to the page's last byte in nanoseconds, or nil when
/// the connection was refused or closed first.
private func timedPageGet(port: Int, from source: String) -> UInt64? {
    let started = nowNanos()
    guard let fd = try? connectFrom(source, port: port) else { return nil }
    defer { close(fd) }
    sendText(fd, "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    while true {
        let count = recv(fd, &buffer, buffer.count, 0)
        if count <= 0 { break }
        received += buffer[0..<count]
        if received.suffix(9) == Array("</html>\n\n".utf8) || received.suffix(8) == Array("</html>\n".utf8) {
            break
        }
    }
    let text = String(decoding: received.prefix(16), as: UTF8.self)
    return text.hasPrefix("HTTP/1.1 200") ? nowNanos() - started : nil
}

/// Opens `pages` event streams on one `countries web` (at most 250 per source address, under its
/// default limit of 256), toggles `toggles` times with the CLI and times each page's event.
func runWebPages(binary: String, service: ServiceUnderTest, pages: Int, toggles: Int) throws -> WebPagesResult
{
    _ = DescriptorLimit.raise(toAtLeast: pages + 1_024)
    let port = try LoopbackPort.free()
    let web = try Child(
        name: "countries web", executable: binary,
        arguments: [
            "web", "--listen", "127.0.0.1:\(port)", "--command", service.command, "--events", service.events,
        ])
    defer { web.stop() }
    let deadline = nowNanos() + 10_000_000_000
    while timedPageGet(port: port, from: "127.0.0.1") == nil {
        guard nowNanos() < deadline, !web.hasExited else { throw BenchError("countries web did not start") }
        usleep(20_000)
    }
    let idleKiB = web.residentKiB()

    var sockets: [Int32] = []
    defer { for fd in sockets { close(fd) } }
    func source(_ page: Int) -> String { "127.0.\(10 + page / 250 / 250).\(1 + (page / 250) % 250)" }
    for page in 0..<pages {
        let fd = try connectFrom(source(page), port: port)
        sendText(fd, "GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        sockets.append(fd)
        if page % 500 == 499 { usleep(20_000) }  // let the web process accept
    }

    // What each page has read lately (a tail, so a marker split across reads is still found).
    var tails = [[UInt8]](repeating: [], count: pages)
    var seen = [UInt64?](repeating: nil, count: pages)
    func readUntil(_ marker: String, within seconds: UInt64) -> Int {
        let wanted = Array(marker.utf8)
        let stop = nowNanos() + seconds * 1_000_000_000
        var count = seen.filter { $0 != nil }.count
        var watched = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while count < pages, nowNanos() < stop {
            guard poll(&watched, nfds_t(watched.count), 100) > 0 else { continue }
            for page in watched.indices where watched[page].revents != 0 {
                while true {
                    let got = recv(sockets[page], &buffer, buffer.count, Int32(MSG_DONTWAIT))
                    if got <= 0 { break }
                    let now = nowNanos()
                    let window = tails[page] + buffer[0..<got]
                    if seen[page] == nil, window.firstRange(of: wanted) != nil {
                        seen[page] = now
                        count += 1
                    }
                    tails[page] = Array(window.suffix(wanted.count))
                }
            }
        }
        return count
    }

    progress("web: \(pages) pages opening")
    let opened = readUntil("\"live\":true", within: 60)
    var samples: [UInt64] = []
    var missed = 0
    for toggle in 1...toggles {
        seen = [UInt64?](repeating: nil, count: pages)
        let started = nowNanos()
        _ = try runToEnd(binary, ["toggle", "France", "--command", service.command])
        let reached = readUntil("id: \(toggle)\n", within: 10)
        missed += pages - reached
        samples += seen.compactMap { $0.map { $0 - started } }
    }
    let openKiB = web.residentKiB()

    var gets: [UInt64] = []
    for _ in 0..<20 { if let took = timedPageGet(port: port, from: "127.0.9.1") { gets.append(took) } }

    // One address at its limit (256, the default): the next connection from it is refused,
    // another address is answered.
    var held: [Int32] = []
    defer { for fd in held { close(fd) } }
    for _ in 0..<256 {
        if let fd = try? connectFrom("127.0.9.2", port: port) {
            sendText(fd, "GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            held.append(fd)
        }
    }
    usleep(300_000)
    let pastLimit = timedPageGet(port: port, from: "127.0.9.2")
    let other = timedPageGet(port: port, from: "127.0.9.3")
    return WebPagesResult(
        pages: pages, opened: opened, fanOut: Percentiles(nanos: samples), missed: missed,
        freshGet: Percentiles(nanos: gets), limitHeld: pastLimit == nil && other != nil,
        otherAddressGet: other.map { Double($0) / 1e6 }, idleKiB: idleKiB, openKiB: openKiB)
}
