import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A datagram socket bound where `$NOTIFY_SOCKET` points, as systemd binds one for a
/// `Type=notify` unit: the tests read what a service tells its manager. Closed (and its path
/// removed) when released.
public final class NotifySocketListener: @unchecked Sendable {
    /// The address to put in `NOTIFY_SOCKET`: a path, or `@name` in the abstract namespace.
    public let address: String
    private let socket: Int32

    /// Binds a datagram socket at `address` (a path, or `@name`).
    public init(address: String) throws {
        self.address = address
        socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw HarnessFailure("socket: \(String(cString: strerror(errno)))") }
        var name = Array(address.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 } else { name.append(0) }
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + name.count)
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(socket)
            throw HarnessFailure("bind \(address): \(reason)")
        }
    }

    deinit {
        close(socket)
        if !address.hasPrefix("@") { unlink(address) }
    }

    /// The next datagram's text, or nil when none comes within `limit` (times the slowdown).
    public func receive(within limit: Duration) -> String? {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: (limit * testSlowdown).milliseconds)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(socket, &buffer, buffer.count, 0)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
