import CountriesCore
import Foundation
import SystemSupport
import TestSupport
import Testing
import ZeroMQ

@testable import CountriesSockets

/// The socket monitors of ``ServerSockets`` while the loop that reads them is busy elsewhere (a
/// replica's pass waiting on etcd): libzmq's I/O thread sends each monitor event with a blocking
/// send, so a full monitor queue would hold that thread, and every connection of the context with
/// it, until the loop came back.
@Suite(.serialized) struct MonitorBacklogTests {
    /// Connections opened and closed by strangers while nothing reads the monitors: two events
    /// each, past the 2,000 a monitor queue held with libzmq's defaults.
    static let strangers = 1_500

    @Test func strangersCannotHoldTheIOThreadWhileTheLoopIsBusy() throws {
        let sockets = try ServerSockets(security: nil, logger: Logger(level: .error) { _ in })
        defer { sockets.close() }
        let publisher = try sockets.makeEventSocket(
            role: "events", countsConnections: true, bounds: SubscriberBounds())
        let endpoint = try sockets.bind(publisher, to: "tcp://127.0.0.1:*", role: "events")
        let port = try #require(Int(endpoint.split(separator: ":").last ?? ""))
        var poller = Poller()
        sockets.register(in: &poller)
        // A failed run must not leave the I/O thread waiting on a monitor: closing would wait too.
        defer { sockets.applySubscriptions() }

        let clientContext = try Context()
        defer { clientContext.terminate() }
        let subscriber = try clientContext.makeSocket(.sub)
        defer { subscriber.close() }
        try subscriber.setOption(.receiveTimeout, Int32(100))
        try subscriber.setOption(.subscribe, Data("country.".utf8))
        try subscriber.connect(endpoint)

        // The loop's part: take the subscription, until a publication gets through.
        var delivered = 0
        let subscribed = eventually {
            sockets.applySubscriptions()
            _ = try? publisher.send(Data("country.a".utf8), then: Data("{}".utf8), dontWait: true)
            while (try? subscriber.receive()) != nil { delivered += 1 }
            return delivered > 0
        }
        try #require(subscribed, "the subscriber never received a publication")

        // The loop is busy now: nothing reads the monitors while strangers come and go.
        let made = Self.openAndClose(Self.strangers, port: port)
        #expect(made == Self.strangers, "only \(made) of \(Self.strangers) connections were accepted")

        // Still not read: a publication must reach the subscriber all the same.
        try publisher.send(Data("country.b".utf8), then: Data("{}".utf8))
        var topic: Data?
        let received = eventually {
            while let frames = try? subscriber.receive() { topic = frames.first }
            return topic == Data("country.b".utf8)
        }
        #expect(received, "the publication was held while the monitors were not read")

        // Every event is still there to read: the count is the subscriber alone.
        let counted = eventually {
            sockets.applySubscriptions()
            return sockets.connections == 1
        }
        #expect(counted, "connections counted: \(sockets.connections)")
    }

    /// Opens `count` plain TCP connections to `port` one after another and closes each at once;
    /// how many were accepted. A connect the listener does not take within its timeout stops it.
    static func openAndClose(_ count: Int, port: Int) -> Int {
        for made in 0..<count {
            guard (try? RawConnection(port: port, connectTimeout: .seconds(2))) != nil else { return made }
        }
        return count
    }
}
