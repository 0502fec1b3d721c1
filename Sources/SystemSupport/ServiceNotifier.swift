#if canImport(Glibc)
    @preconcurrency import Glibc
#else
    import Darwin
#endif

/// Tells the service manager how the service is doing, by systemd's notify protocol (what
/// `sd_notify` does, without linking libsystemd): one datagram such as `READY=1` to the AF_UNIX
/// socket named in `$NOTIFY_SOCKET`. A unit with `Type=notify` counts the service as started
/// only once `READY=1` arrives.
public struct ServiceNotifier: Sendable {
    /// The service is up: its store is open and it answers on its sockets.
    public static let ready = "READY=1"
    /// The service is shutting down.
    public static let stopping = "STOPPING=1"

    /// The socket's address as `$NOTIFY_SOCKET` gives it: a path, or `@name` for a name in the
    /// abstract namespace.
    public let socketAddress: String

    /// The notifier `$NOTIFY_SOCKET` asks for; nil when it is unset or empty (not run by a
    /// service manager, or a unit that is not `Type=notify`), and then there is no one to tell.
    public init?(environment: [String: String]) {
        guard let address = environment["NOTIFY_SOCKET"], !address.isEmpty else { return nil }
        self.init(socketAddress: address)
    }

    /// A notifier for the socket at `socketAddress` (a path, or `@name` for the abstract
    /// namespace).
    public init(socketAddress: String) {
        self.socketAddress = socketAddress
    }

    /// Sends `state` (e.g. ``ready``; several `KEY=VALUE` lines may go in one) as one datagram.
    public func notify(_ state: String) throws(ServiceNotifierError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socketAddress.utf8)
        let isAbstract = name.first == UInt8(ascii: "@")
        guard isAbstract || name.first == UInt8(ascii: "/") else {
            throw ServiceNotifierError(
                "NOTIFY_SOCKET=\(socketAddress) is neither an absolute path nor an @abstract name")
        }
        // An abstract name starts with a NUL byte in place of the `@`; a path ends with one.
        if isAbstract { name[0] = 0 } else { name.append(0) }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard name.count <= capacity else {
            throw ServiceNotifierError("NOTIFY_SOCKET=\(socketAddress) is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: name)
        }
        // The abstract namespace counts every byte of the length given, so it is exact.
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + name.count)

        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ServiceNotifierError(notifying: socketAddress, errno: errno) }
        defer { close(socket) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                message.withUnsafeBytes { bytes in
                    sendto(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), generic, length)
                }
            }
        }
        guard sent == message.count else {
            throw ServiceNotifierError(notifying: socketAddress, errno: errno)
        }
    }
}

/// Why the service manager could not be told: a bad `$NOTIFY_SOCKET`, or a socket that refused.
public struct ServiceNotifierError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, naming the socket.
    public let description: String

    init(_ description: String) {
        self.description = description
    }

    init(notifying address: String, errno code: Int32) {
        description =
            "could not notify the service manager at \(address): \(String(cString: strerror(code)))"
            + " (is NOTIFY_SOCKET stale?)"
    }
}
