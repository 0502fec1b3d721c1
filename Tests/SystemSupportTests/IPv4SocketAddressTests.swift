import Testing

@testable import SystemSupport

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Binding, reading the bound port back and connecting through ``IPv4SocketAddress``.
@Suite struct IPv4SocketAddressTests {
    @Test func aListenerBoundToPortZeroIsReachedAtThePortItReads() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer {
            close(listener)
            close(client)
        }
        #expect(IPv4SocketAddress(host: "127.0.0.1", port: 0).bind(listener))
        #expect(listen(listener, 1) == 0)
        let bound = try #require(IPv4SocketAddress(boundTo: listener))
        #expect(bound.port > 0)
        #expect(bound.raw.sin_addr.s_addr == inet_addr("127.0.0.1"))
        #expect(IPv4SocketAddress(host: "127.0.0.1", port: bound.port).connect(client))
        // The port is taken now: a second bind to it is refused, with errno saying why.
        let second = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(second) }
        #expect(!IPv4SocketAddress(host: "127.0.0.1", port: bound.port).bind(second))
        #expect(errno == EADDRINUSE)
    }
}
