import CMicroHTTPD
@preconcurrency import Glibc
import SystemSupport

/// A small event-driven HTTP server on libmicrohttpd (epoll threads; a response that waits,
/// an event stream with nothing to send or an answer to come, suspends its connection rather
/// than hold a thread): it answers every request with what `handler` returns. It knows nothing
/// of countries.
///
/// Bounds (see ``Limits``): connections in all and per address, bytes per connection for the
/// request line and headers (a larger request gets 431/413 from the library), no request
/// bodies (413), a whole request within `requestTimeout`, and bytes queued per event stream
/// (see ``EventStream``). A page that closes its stream is let go within two watch intervals.
public final class HTTPServer: Sendable {
    /// Why the server did not start.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        /// What went wrong and what to do.
        public var description: String
    }

    /// The port listened on.
    public let port: Int
    /// The connections the server holds at once: `limits.connections`, or fewer when the
    /// process may not open that many descriptors.
    public let connectionLimit: Int
    private let context: ServerContext
    private let daemon: Locked<OpaquePointer?>

    /// Starts listening on `host` (an IPv4 or IPv6 literal) and `port` (0: any free one).
    public init(
        host: String, port: Int, limits: Limits = Limits(),
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(StartError) {
        // Descriptors beyond the connections: the listening sockets, the service's sockets, logs.
        let spare = 256
        let descriptors = DescriptorLimit.raise(toAtLeast: limits.connections + spare)
        connectionLimit = max(1, min(limits.connections, descriptors - spare))
        guard var storage = Self.socketAddress(host: host, port: port) else {
            throw StartError(description: "\(host) is not an IP address; give one such as 127.0.0.1 or ::1")
        }
        let context = ServerContext(limits: limits, handler: handler)
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        let connections = connectionLimit
        let started = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                countries_mhd_start(
                    address, acceptPolicy, accessHandler, contextPointer, requestCompleted,
                    connectionNotified, requestStarted, UInt32(connections), limits.memoryPerConnection,
                    UInt32(limits.idleTimeoutSeconds),
                    UInt32(max(1, limits.threads)))
            }
        }
        guard let started else {
            context.watch.stop()
            throw StartError(
                description:
                    "cannot listen on \(host):\(port) (in use, or not an address of this machine); pick another --listen"
            )
        }
        self.context = context
        daemon = Locked(started)
        self.port = Int(countries_mhd_port(started))
    }

    private static func socketAddress(host: String, port: Int) -> sockaddr_storage? {
        var storage = sockaddr_storage()
        let parsed = withUnsafeMutablePointer(to: &storage) { pointer -> Bool in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                v4.pointee.sin_family = sa_family_t(AF_INET)
                v4.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                return inet_pton(AF_INET, host, &v4.pointee.sin_addr) == 1
            }
        }
        if parsed { return storage }
        storage = sockaddr_storage()
        let parsed6 = withUnsafeMutablePointer(to: &storage) { pointer -> Bool in
            pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                v6.pointee.sin6_family = sa_family_t(AF_INET6)
                v6.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
                return inet_pton(AF_INET6, host, &v6.pointee.sin6_addr) == 1
            }
        }
        return parsed6 ? storage : nil
    }

    /// Ends every event stream, answers every waiting request (503), gives them up to
    /// `drain` to reach their clients, and stops the server (waits for its threads).
    public func stop(drain: Duration = .seconds(1)) {
        guard
            let running = daemon.withLock({ daemon -> OpaquePointer? in
                defer { daemon = nil }
                return daemon
            })
        else { return }
        context.watch.stop()
        let deadline = ContinuousClock.now + drain
        while !context.watch.isDrained, ContinuousClock.now < deadline { usleep(5_000) }
        MHD_stop_daemon(running)
    }

    /// The number of event streams open now.
    public var openStreams: Int { context.watch.openStreams }

    deinit { stop() }
}
