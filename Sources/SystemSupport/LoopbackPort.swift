import Foundation
@preconcurrency import Glibc

/// A tcp port on 127.0.0.1 for a test or a bench to give a server it starts: the one way both
/// find one.
///
/// The port is released before the caller binds it, so something else could take it in between.
/// A port from the kernel's ephemeral range (bind to port 0) is exactly what every `connect(2)`
/// and every `tcp://...:*` bind on the machine draws from too, and a parallel test run makes
/// thousands of those: CI once lost a service's start, and once an etcd member's, to a port
/// taken that way. So the port comes from just below that range, which the kernel never hands
/// out by itself; it is checked free with a bind, and this process never hands the same one out
/// twice.
public enum LoopbackPort {
    /// A port that was free a moment ago and that nothing else will take by chance.
    ///
    /// Throws a ``LoopbackPortError`` when no socket can be made, or 200 random ports below
    /// the ephemeral range were all taken.
    public static func free() throws(LoopbackPortError) -> Int {
        let candidates = candidateRange(ephemeralStart: ephemeralRangeStart())
        for _ in 0..<200 {
            let port = Int.random(in: candidates)
            let fresh = handedOut.withLock { $0.insert(port).inserted }
            if fresh, try isFree(port) { return port }
        }
        throw LoopbackPortError("no free tcp port on 127.0.0.1 in \(candidates) after 200 tries")
    }

    /// The ports ``free()`` draws from: the 12,000 below the ephemeral range (fewer when that
    /// range starts low), never a privileged one.
    static func candidateRange(ephemeralStart: Int) -> Range<Int> {
        let start = max(1024, ephemeralStart - 12_000)
        return start..<max(start + 1, ephemeralStart)
    }

    /// Ports ``free()`` has returned in this process. `Locked`, not `Mutex`: ThreadSanitizer
    /// takes `withLock` on a global `Mutex` for a racing modification (it cannot see the futex),
    /// and reported it when several suites made etcd clusters at once.
    private static let handedOut = Locked<Set<Int>>([])

    /// The first port of the kernel's ephemeral range (`net.ipv4.ip_local_port_range`), 32768 if
    /// it cannot be read.
    static func ephemeralRangeStart() -> Int {
        ephemeralRangeStart(
            reading: try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
    }

    /// The first port of the range in `text` (the file's "first<tab>last"), 32768 when there is
    /// no such text or its first port is implausibly low.
    static func ephemeralRangeStart(reading text: String?) -> Int {
        guard let first = text?.split(whereSeparator: \.isWhitespace).first.flatMap({ Int($0) }), first > 2048
        else { return 32_768 }
        return first
    }

    /// Whether 127.0.0.1:`port` can be bound now (no SO_REUSEADDR, so a lingering socket counts).
    private static func isFree(_ port: Int) throws(LoopbackPortError) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else {
            throw LoopbackPortError("socket(2) failed: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        return IPv4SocketAddress(host: "127.0.0.1", port: port).bind(fd)
    }
}
