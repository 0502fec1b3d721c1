import Foundation
@preconcurrency import Glibc
import TestSupport

/// A raw TCP connection to a test server, from a chosen loopback address, that sends what it is
/// told and reads only when asked: a page that stops reading, a slowloris client, a tab that
/// closes.
final class RawConnection {
    let fd: Int32

    /// Connects to 127.0.0.1:`port` from `source` (any 127.x.y.z address is this machine's).
    init(port: Int, from source: String = "127.0.0.1", receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            // A small receive buffer, so the kernel holds little of what the page does not read.
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw HarnessFailure("bind to \(source) failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw HarnessFailure("connect failed: errno \(errno)") }
    }

    /// Opens the event stream at `path`.
    static func page(port: Int, path: String = "/events", receiveBuffer: Int32? = nil) throws -> RawConnection
    {
        let connection = try RawConnection(port: port, receiveBuffer: receiveBuffer)
        connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        return connection
    }

    func send(_ text: String) {
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// Everything read so far.
    private(set) var bytes: [UInt8] = []
    /// Whether the server closed the connection.
    private(set) var closedByServer = false

    /// Reads whatever has arrived (non-blocking); the byte count, 0 at end of stream, nil when
    /// nothing is there yet.
    @discardableResult
    func drain() -> Int? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            closedByServer = true
            return 0
        }
        if count == 0 { closedByServer = true }
        bytes += buffer[0..<count]
        return count
    }

    /// Reads until nothing more is there now.
    func drainAll() {
        while let count = drain(), count > 0 {}
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    deinit { close(fd) }
}
