import Foundation
import Testing
import ZeroMQ

@Suite("Socket options")
struct OptionTests {
    @Test("Options read back what was set")
    func roundTrip() throws {
        let context = try Context()
        let socket = try context.makeSocket(.dealer)

        #expect(try socket.getOption(.linger) == -1)  // libzmq's default: linger forever.
        try socket.setOption(.linger, 250)
        #expect(try socket.getOption(.linger) == 250)
        try socket.setOption(.sendHighWaterMark, 7)
        #expect(try socket.getOption(.sendHighWaterMark) == 7)
        try socket.setOption(.receiveHighWaterMark, 9)
        #expect(try socket.getOption(.receiveHighWaterMark) == 9)
        try socket.setOption(.maxMessageSize, 1 << 33)
        #expect(try socket.getOption(.maxMessageSize) == 1 << 33)
        try socket.setOption(.receiveTimeout, 123)
        #expect(try socket.getOption(.receiveTimeout) == 123)
        try socket.setOption(.heartbeatInterval, 1000)
        #expect(try socket.getOption(.heartbeatInterval) == 1000)
        try socket.setOption(.reconnectIntervalMax, 5000)
        #expect(try socket.getOption(.reconnectIntervalMax) == 5000)

        #expect(try socket.getOption(.immediate) == false)
        try socket.setOption(.immediate, true)
        #expect(try socket.getOption(.immediate) == true)
        try socket.setOption(.ipv6, true)
        #expect(try socket.getOption(.ipv6) == true)

        let id = Data([1, 2, 3, 0, 4])
        try socket.setOption(.routingID, id)
        #expect(try socket.getOption(.routingID) == id)

        try socket.setOption(.zapDomain, "countries")
        #expect(try socket.getOption(.zapDomain) == "countries")

        // Nothing bound or connected yet.
        #expect(try socket.lastEndpoint == "")
        #expect(try socket.getOption(.receiveMore) == false)
        #expect(try socket.getOption(.fileDescriptor) >= 0)
    }

    @Test("CURVE keys are set as Z85 text and read back as Z85 text", .enabled(if: Curve.isAvailable))
    func curveKeys() throws {
        let context = try Context()
        let socket = try context.makeSocket(.rep)
        let pair = try Curve.generateKeyPair()
        try socket.setOption(.curveServer, true)
        #expect(try socket.getOption(.curveServer) == true)
        try socket.setOption(.curveSecretKey, pair.secretKey)
        #expect(try socket.getOption(.curveSecretKey) == pair.secretKey)
        try socket.setOption(.curvePublicKey, pair.publicKey)
        #expect(try socket.getOption(.curvePublicKey) == pair.publicKey)

        // A key of the wrong length is refused by libzmq, and the error does not repeat the key.
        #expect(throws: ZMQError(code: EINVAL, operation: "setOption(50, <key>)")) {
            try socket.setOption(.curveServerKey, "short")
        }
    }

    @Test("The ZMQ_EVENTS option reflects a waiting message")
    func events() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull)
        let push = try context.testSocket(.push)
        try pull.bind("inproc://events")
        try push.connect("inproc://events")
        #expect(PollEvents(rawValue: Int16(try pull.getOption(.events))).contains(.readable) == false)
        try push.send([frame("x")])
        #expect(PollEvents(rawValue: Int16(try pull.getOption(.events))).contains(.readable))
        #expect(PollEvents(rawValue: Int16(try push.getOption(.events))).contains(.writable))
    }

    @Test("maxMessageSize drops the peer that sends an oversized message; small ones pass")
    func maxMessageSize() throws {
        let context = try Context()
        let pull = try context.testSocket(.pull)
        let push = try context.testSocket(.push)
        // Not too small: the limit applies to ZMTP handshake commands as well (READY carries the
        // socket type), so a limit of 16 bytes would refuse every connection.
        try pull.setOption(.maxMessageSize, 64)
        // Reconnect quickly after being dropped, so the last step does not wait on the back-off.
        try push.setOption(.reconnectInterval, 20)
        // tcp, not inproc: the limit is enforced by the wire decoder, which inproc skips.
        try pull.bind("tcp://127.0.0.1:*")
        try push.connect(try pull.lastEndpoint)

        #expect(try push.send([frame("small")]))
        #expect(texts(try pull.receive()) == ["small"])

        #expect(try push.send([Data(repeating: 7, count: 1000)]))
        try pull.setOption(.receiveTimeout, 300)
        #expect(try pull.receive() == nil)

        // The sender reconnects and small messages flow again.
        try pull.setOption(.receiveTimeout, patience)
        #expect(try push.send([frame("again")]))
        #expect(texts(try pull.receive()) == ["again"])
    }
}
