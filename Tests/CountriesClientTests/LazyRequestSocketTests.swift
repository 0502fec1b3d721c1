import Foundation
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesClient

/// A client's REQ socket left retrying a service that has gone: libzmq tells a connect watch of
/// every retry, and about 2,000 unread stop the context's I/O thread, with a view's
/// subscription in the same context. Retries every millisecond stand for 200 s of a service
/// down at libzmq's 100 ms.
@Suite("LazyRequestSocket")
struct LazyRequestSocketTests {
    private static let retriesAtTheLimit: TimeInterval = 6

    @Test("A socket whose owner reads no watch has none: its retries leave the context working")
    func withoutAWatchRetriesCostNothing() throws {
        let context = try Context()
        let directory = try ScratchDirectory()
        let lazy = LazyRequestSocket(
            context: context, endpoint: "ipc://\(directory.path)/gone.sock", security: nil,
            watchesConnect: false)
        lazy.connectOptions = [(.reconnectInterval, 1)]
        #expect(try lazy.connected().watch == nil)
        Thread.sleep(forTimeInterval: Self.retriesAtTheLimit)
        guard try expectCarriesMessages(context, abandoning: lazy) else { return }
        lazy.discard()
    }

    @Test("After an answer the watch goes: retries after it leave the context working")
    func anAnswerEndsTheWatch() throws {
        let context = try Context()
        let directory = try ScratchDirectory()
        let endpoint = "ipc://\(directory.path)/service.sock"
        let service = try context.makeSocket(.rep)
        try service.setOption(.linger, 0)
        try service.setOption(.receiveTimeout, Int32(5_000 * testSlowdown))
        try service.bind(endpoint)
        let lazy = LazyRequestSocket(
            context: context, endpoint: endpoint, security: nil, watchesConnect: true)
        lazy.connectOptions = [(.reconnectInterval, 1)]
        let (socket, watch) = try lazy.connected()
        #expect(watch != nil)
        #expect(try socket.send([Data("count".utf8)]))
        #expect(try service.receive() != nil)
        #expect(try service.send([Data("8".utf8)]))
        try socket.setOption(.receiveTimeout, Int32(5_000 * testSlowdown))
        #expect(try socket.receive() == [Data("8".utf8)])
        lazy.answered()
        #expect(lazy.current?.watch == nil)
        // The service goes; the socket retries for good.
        service.close()
        Thread.sleep(forTimeInterval: Self.retriesAtTheLimit)
        guard try expectCarriesMessages(context, abandoning: lazy) else { return }
        lazy.discard()
    }
}
