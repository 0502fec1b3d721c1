import Foundation
import TestSupport
import Testing
import ZeroMQ

@Suite("Round trips")
struct RoundTripTests {
    @Test("REQ/REP round trip", arguments: Transport.allCases)
    func requestReply(over transport: Transport) throws {
        let directory = try ScratchDirectory(prefix: "zmqt")
        defer { directory.remove() }
        let context = try Context()
        let (rep, req) = try context.connectedPair(.rep, .req, over: transport, in: directory)
        let endpoint = try rep.lastEndpoint
        #expect(endpoint.hasPrefix("\(transport.rawValue)://"))
        if transport == .tcp {
            // The wildcard port was replaced by the real one.
            #expect(!endpoint.hasSuffix(":*"))
        }

        #expect(try req.send([frame("ping")]))
        #expect(texts(try rep.receive()) == ["ping"])
        #expect(try rep.send([frame("pong")]))
        #expect(texts(try req.receive()) == ["pong"])
    }

    @Test("Multipart messages keep every frame, including empty ones")
    func multipart() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull)
        let push = try context.testSocket(.push)
        try pull.bind("inproc://multipart")
        try push.connect("inproc://multipart")

        let message = [Data(), frame("a"), Data(), Data([0, 1, 2, 255]), Data()]
        #expect(try push.send(message))
        #expect(try pull.receive() == message)

        // A single empty frame is a message too.
        #expect(try push.send([Data()]))
        #expect(try pull.receive() == [Data()])

        // A large frame crosses intact.
        let large = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        #expect(try push.send([large, frame("tail")]))
        #expect(try pull.receive() == [large, frame("tail")])
    }

    @Test("ROUTER sees the DEALER's routing id and routes the reply back by it")
    func routerDealer() throws {
        let context = try Context()
        let router = try context.testSocket(.router)
        let dealer = try context.testSocket(.dealer)
        try dealer.setOption(.routingID, frame("client-1"))
        try router.bind("tcp://127.0.0.1:*")
        try dealer.connect(try router.lastEndpoint)

        // A REQ-style envelope: empty delimiter, then the body.
        #expect(try dealer.send([Data(), frame("hello")]))
        #expect(texts(try router.receive()) == ["client-1", "", "hello"])

        #expect(try router.send([frame("client-1"), Data(), frame("world")]))
        #expect(texts(try dealer.receive()) == ["", "world"])
    }

    @Test("ROUTER with routerMandatory reports an unknown peer instead of dropping the message")
    func routerMandatory() throws {
        let context = try Context()
        let router = try context.testSocket(.router)
        try router.setOption(.routerMandatory, true)
        try router.bind("inproc://mandatory")

        #expect(throws: ZMQError.self) {
            try router.send([frame("nobody"), frame("lost")])
        }
        do {
            try router.send([frame("nobody"), frame("lost")])
        } catch {
            #expect(error.code == EHOSTUNREACH)
            #expect(error.message == "Host unreachable")
        }
    }
}
