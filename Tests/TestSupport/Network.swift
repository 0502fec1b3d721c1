import Foundation
import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A tcp port on 127.0.0.1 that was free a moment ago and that nothing else will take by chance.
///
/// The port is released before the caller binds it, so something else could take it in between.
/// A port from the kernel's ephemeral range (bind to port 0) is exactly what every `connect(2)`
/// and every `tcp://...:*` bind on the machine draws from too, and a parallel test run made
/// thousands of those: CI once lost a service's start to a port taken that way. So the port
/// comes from just below that range, which the kernel never hands out by itself; it is checked
/// free with a bind, and this process never hands the same one out twice.
public func freeTCPPort() throws -> Int {
    let ephemeralStart = ephemeralPortRangeStart()
    let candidates = max(1024, ephemeralStart - 12_000)..<ephemeralStart
    for _ in 0..<200 {
        let port = Int.random(in: candidates)
        let fresh = handedOutPorts.withLock { $0.insert(port).inserted }
        if fresh, try isFreeTCPPort(port) { return port }
    }
    throw HarnessFailure("no free tcp port in \(candidates) after 200 tries")
}

/// Ports ``freeTCPPort()`` has returned in this process. `Locked`, not `Mutex`: ThreadSanitizer
/// takes `withLock` on a global `Mutex` for a racing modification (it cannot see the futex), and
/// reported it when several suites made etcd clusters at once.
private let handedOutPorts = Locked<Set<Int>>([])

/// The first port of the kernel's ephemeral range (`net.ipv4.ip_local_port_range`), 32768 if
/// it cannot be read.
private func ephemeralPortRangeStart() -> Int {
    guard let range = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
        let first = range.split(whereSeparator: \.isWhitespace).first.flatMap({ Int($0) }), first > 2048
    else { return 32_768 }
    return first
}

/// The IPv4 socket address `host`:`port` (`host` a dotted literal).
func ipv4Address(_ host: String, port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr(host)
    return address
}

/// Whether 127.0.0.1:`port` can be bound now (no SO_REUSEADDR, so a lingering socket counts).
private func isFreeTCPPort(_ port: Int) throws -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessFailure("socket(2) failed") }
    defer { close(fd) }
    var address = ipv4Address("127.0.0.1", port: port)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return bound == 0
}

/// System tools (`ip`, `mount`, `chattr`) on the usual paths.
public enum SystemTool {
    /// The path of `name` in /usr/sbin, /sbin, /usr/bin or /bin, if it is there.
    public static func path(_ name: String) -> String? {
        for directory in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
