@preconcurrency import Glibc
import Testing

@testable import HTTPServer

/// Which connections count as one client's for the per-address bound, and the counting.
@Suite struct ClientAddressGroupTests {
    private func group(_ text: String) -> ClientAddressGroup? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return ClientAddressGroup(addressBytes: withUnsafeBytes(of: v4) { Array($0) })
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        return ClientAddressGroup(addressBytes: withUnsafeBytes(of: v6) { Array($0) })
    }

    @Test func anIPv6ClientIsItsSlash64() {
        #expect(group("2001:db8:1:2::1") == group("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(group("2001:db8:1:2::1") != group("2001:db8:1:3::1"))
        #expect(group("2001:db8:1:2::1")?.description == "2001:db8:1:2::/64")
    }

    @Test func anIPv4ClientIsItsAddressAlsoWhenMapped() {
        #expect(group("127.0.0.1") != group("127.0.0.2"))
        #expect(group("::ffff:192.0.2.7") == group("192.0.2.7"))
        #expect(group("::ffff:192.0.2.7") != group("::ffff:192.0.2.8"))
        #expect(group("192.0.2.7")?.description == "192.0.2.7")
        // Translated by NAT64: each IPv4 host its own client, not one /64 for all of them.
        #expect(group("64:ff9b::192.0.2.7") == group("192.0.2.7"))
        #expect(group("64:ff9b::192.0.2.7") != group("64:ff9b::192.0.2.8"))
        // Not mapped: ::1 and ::2 share the /64 of ::.
        #expect(group("::1") == group("::2"))
    }

    @Test func otherLengthsAreNoAddress() {
        #expect(ClientAddressGroup(addressBytes: [1, 2, 3]) == nil)
        #expect(ClientAddressGroup(addressBytes: []) == nil)
    }

    @Test func aClientAtItsLimitIsRefusedUntilOneOfItsConnectionsCloses() throws {
        let clients = ConnectionsPerClient(limit: 2)
        let one = try #require(group("2001:db8::1"))
        let sameSlash64 = try #require(group("2001:db8::2"))
        let other = try #require(group("2001:db9::1"))
        clients.opened(1, from: one)
        #expect(clients.admits(sameSlash64))
        clients.opened(2, from: sameSlash64)
        #expect(!clients.admits(one) && !clients.admits(sameSlash64))
        #expect(clients.admits(other))
        clients.closed(99)  // never counted
        #expect(clients.count(of: one) == 2)
        clients.closed(1)
        #expect(clients.admits(one))
        clients.closed(2)
        #expect(clients.count(of: one) == 0)
        clients.closed(2)  // twice: nothing
        #expect(clients.count(of: one) == 0)
    }

    @Test func noLimitAdmitsEveryone() throws {
        let clients = ConnectionsPerClient(limit: 0)
        let one = try #require(group("192.0.2.1"))
        for key in 0..<1_000 { clients.opened(UInt(key), from: one) }
        #expect(clients.admits(one))
    }
}
