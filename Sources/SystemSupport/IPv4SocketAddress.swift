@preconcurrency import Glibc

/// An IPv4 socket address (`sockaddr_in`) and the calls that take one, so that a caller binds,
/// connects or reads a socket's port without rebinding pointers itself: the tests, the bench
/// and ``LoopbackPort`` each wrote that dance out before.
public struct IPv4SocketAddress {
    /// The address as the kernel takes it.
    public private(set) var raw = sockaddr_in()

    /// `host` (a dotted literal such as `127.0.0.1`) and `port` (0: any free one, on a bind).
    public init(host: String, port: Int) {
        raw.sin_family = sa_family_t(AF_INET)
        raw.sin_port = in_port_t(UInt16(port).bigEndian)
        raw.sin_addr.s_addr = inet_addr(host)
    }

    /// The address `fd` is bound to (`getsockname(2)`), nil when it cannot be read.
    public init?(boundTo fd: Int32) {
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let read = withUnsafeMutablePointer(to: &raw) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard read == 0 else { return nil }
    }

    /// The port, in host order.
    public var port: Int { Int(UInt16(bigEndian: raw.sin_port)) }

    /// Binds `fd` to this address; false (with `errno` set) when the kernel refuses.
    public func bind(_ fd: Int32) -> Bool {
        withSocketAddress { Glibc.bind(fd, $0, $1) == 0 }
    }

    /// Connects `fd` to this address; false (with `errno` set) when the kernel refuses.
    public func connect(_ fd: Int32) -> Bool {
        withSocketAddress { Glibc.connect(fd, $0, $1) == 0 }
    }

    private func withSocketAddress<Result>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        withUnsafePointer(to: raw) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
}
