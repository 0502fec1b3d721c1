import Foundation
@preconcurrency import Glibc

/// Drops one connection of a bound socket by its descriptor, as a message named it
/// (``SubscriberLedger/Peer``): libzmq 4.3 has no call to drop one peer of an XPUB, so the
/// connection is shut down under it (`shutdown(2)`, both ways); libzmq then sees it end,
/// closes it and forgets the peer's subscriptions, as when a peer leaves.
///
/// The descriptor is libzmq's: by the time the loop reads the message, the connection may
/// have gone and its number been given to another. So it is shut down only when it still is a
/// connection accepted on `endpoint` from the same peer address (the same process, over ipc).
enum PeerDisconnection {
    /// Shuts the connection down if it still is `peer`'s on `endpoint`; whether it did.
    static func disconnect(_ peer: SubscriberLedger.Peer, acceptedOn endpoint: String) -> Bool {
        guard isConnection(peer, acceptedOn: endpoint) else { return false }
        return shutdown(peer.descriptor, Int32(SHUT_RDWR)) == 0
    }

    /// Whether `descriptor` is an open connection that is not shut down: after a drop, its
    /// number has gone to another connection.
    static func isLive(_ descriptor: Int32) -> Bool {
        var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&item, 1, 0) >= 0 else { return false }
        return Int32(item.revents) & (POLLHUP | POLLNVAL) == 0
    }

    /// Whether `peer.descriptor` is a socket accepted on `endpoint` whose other end is
    /// `peer.address` (as libzmq writes it).
    static func isConnection(_ peer: SubscriberLedger.Peer, acceptedOn endpoint: String) -> Bool {
        var status = stat()
        guard fstat(peer.descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return false }
        guard let local = address(of: peer.descriptor, local: true), local.matches(endpoint) else {
            return false
        }
        switch local {
        case .unix:
            // libzmq: getnameinfo's host ("localhost"), then ":UID:GID:PID" of SO_PEERCRED.
            var credentials = Credentials()
            var size = socklen_t(MemoryLayout<Credentials>.size)
            guard getsockopt(peer.descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else {
                return false
            }
            return peer.address.hasSuffix(":\(credentials.uid):\(credentials.gid):\(credentials.pid)")
        case .ip:
            guard case .ip(let host, _)? = address(of: peer.descriptor, local: false) else { return false }
            return host == peer.address
        }
    }

    /// `struct ucred` (Linux; it needs `_GNU_SOURCE`, which Swift's Glibc module leaves out).
    private struct Credentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    /// One end of a connection.
    enum Address {
        case unix(path: String)
        case ip(host: String, port: Int)

        /// Whether this is where `endpoint` (`ipc://PATH`, `tcp://HOST:PORT`) listens.
        func matches(_ endpoint: String) -> Bool {
            switch self {
            case .unix(let path):
                return endpoint == "ipc://\(path)"
            case .ip(_, let port):
                guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") else {
                    return false
                }
                return Int(endpoint[endpoint.index(after: colon)...]) == port
            }
        }
    }

    /// The local or remote address of a socket, as libzmq would write it.
    static func address(of descriptor: Int32, local: Bool) -> Address? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                local ? getsockname(descriptor, $0, &length) : getpeername(descriptor, $0, &length)
            }
        }
        guard result == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_UNIX:
            let path = withUnsafeBytes(of: &storage) { raw -> String in
                let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
                let bytes = raw[offset..<min(Int(length), raw.count)]
                // An abstract socket starts with a zero byte; libzmq writes it as `@name`.
                if bytes.first == 0 { return "@" + String(decoding: bytes.dropFirst(), as: UTF8.self) }
                return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            return .unix(path: path)
        case AF_INET, AF_INET6:
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            var service = [CChar](repeating: 0, count: 32)
            let resolved = withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    getnameinfo(
                        $0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                        NI_NUMERICHOST | NI_NUMERICSERV)
                }
            }
            guard resolved == 0 else { return nil }
            let hostText = String(
                decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let port = Int(
                String(decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            return .ip(host: hostText, port: port ?? 0)
        default:
            return nil
        }
    }
}
