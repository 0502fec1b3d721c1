@preconcurrency import Glibc

/// The addresses one client is taken to hold, for the per-address connection bound: an IPv4
/// address alone, an IPv6 address's /64 (a host is given a whole /64, and picks any address in
/// it as it likes: counted one by one, it could hold every slot), and an IPv6 address that
/// carries an IPv4 one (`::ffff:a.b.c.d`, an IPv4 client of a dual-stack socket, or
/// `64:ff9b::a.b.c.d`, one translated by NAT64) as that IPv4 address.
struct ClientAddressGroup: Hashable, Sendable, CustomStringConvertible {
    /// The address bytes that name the group: 4 for IPv4, the 8 of the /64 for IPv6.
    let prefix: [UInt8]

    /// The group of IPv4 address `bytes` (4 bytes) or IPv6 address `bytes` (16 bytes); nil for
    /// another length.
    init?(addressBytes bytes: [UInt8]) {
        switch bytes.count {
        case 4:
            prefix = bytes
        case 16:
            let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xff, 0xff]
            // 64:ff9b::/96, NAT64's well-known prefix (RFC 6052): an IPv4 host translated; as a
            // /64, every IPv4 client behind the translator would be one.
            let translated: [UInt8] = [0x00, 0x64, 0xff, 0x9b] + Array(repeating: 0, count: 8)
            let embedsIPv4 = bytes.starts(with: mapped) || bytes.starts(with: translated)
            prefix = embedsIPv4 ? Array(bytes[12...]) : Array(bytes[..<8])
        default:
            return nil
        }
    }

    /// The group of a socket address; nil for a family other than IPv4 and IPv6.
    init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafeBytes(of: v4.pointee.sin_addr) { Array($0) }
            }
            self.init(addressBytes: bytes)
        case AF_INET6:
            let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) }
            }
            self.init(addressBytes: bytes)
        default:
            return nil
        }
    }

    /// `a.b.c.d`, or the /64 as `xxxx:xxxx:xxxx:xxxx::/64`.
    var description: String {
        if prefix.count == 4 { return prefix.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: prefix.count, by: 2).map {
            String(UInt16(prefix[$0]) << 8 | UInt16(prefix[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }
}
