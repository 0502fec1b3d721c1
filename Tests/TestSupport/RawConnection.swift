import Foundation
@preconcurrency import Glibc
import SystemSupport

/// A raw TCP connection to a test server, from a chosen loopback address, that sends what it is
/// told and reads only when asked: a page that stops reading, a slowloris client, a tab that
/// closes.
public final class RawConnection {
    /// The socket.
    public let fd: Int32

    /// Connects to 127.0.0.1:`port` from `source` (any 127.x.y.z address is this machine's).
    /// With `connectTimeout` (scaled by ``testSlowdown``), a listener that does not take the
    /// connection in time throws instead of leaving the caller in the kernel's retries.
    public init(
        port: Int, from source: String = "127.0.0.1", receiveBuffer: Int32? = nil,
        connectTimeout: Duration? = nil
    ) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let connectTimeout {
            // On Linux a connect's timeout is the send timeout.
            let limit = connectTimeout * testSlowdown
            var timeout = timeval(
                tv_sec: Int(limit.components.seconds),
                tv_usec: Int(limit.components.attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        if var size = receiveBuffer {
            // A small receive buffer, so the kernel holds little of what the page does not read.
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        guard IPv4SocketAddress(host: source, port: 0).bind(fd) else {
            throw HarnessFailure("bind to \(source) failed: errno \(errno)")
        }
        guard IPv4SocketAddress(host: "127.0.0.1", port: port).connect(fd) else {
            throw HarnessFailure("connect failed: errno \(errno)")
        }
    }

    /// Opens the event stream at `path`.
    public static func page(port: Int, path: String = "/events", receiveBuffer: Int32? = nil) throws
        -> RawConnection
    {
        let connection = try RawConnection(port: port, receiveBuffer: receiveBuffer)
        connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        return connection
    }

    /// Sends `text` as it is.
    public func send(_ text: String) {
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// Everything read so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether the server closed the connection.
    public private(set) var closedByServer = false

    /// Reads whatever has arrived (non-blocking); the byte count, 0 at end of stream, nil when
    /// nothing is there yet.
    @discardableResult
    public func drain() -> Int? {
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
    public func drainAll() {
        while let count = drain(), count > 0 {}
    }

    /// Everything read so far, as UTF-8.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    deinit { close(fd) }
}
