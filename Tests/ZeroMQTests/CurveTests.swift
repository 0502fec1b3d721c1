import Foundation
import Testing
import ZeroMQ

@Suite("CURVE and Z85")
struct CurveTests {
    @Test(
        "A generated key pair's public key can be derived from its secret key",
        .enabled(if: Curve.isAvailable))
    func keyPair() throws {
        let pair = try Curve.generateKeyPair()
        #expect(pair.publicKey.utf8.count == 40)
        #expect(pair.secretKey.utf8.count == 40)
        #expect(try Curve.publicKey(forSecretKey: pair.secretKey) == pair.publicKey)
        #expect(Z85.decode(pair.publicKey)?.count == 32)
        #expect(try Curve.generateKeyPair() != pair)
    }

    @Test(
        "An invalid secret key is refused",
        arguments: ["", "short", String(repeating: "~", count: 40), String(repeating: "a", count: 45)])
    func invalidSecretKey(_ key: String) {
        #expect(throws: ZMQError.self) {
            try Curve.publicKey(forSecretKey: key)
        }
    }

    @Test("Z85 matches the RFC 32 test vector and round-trips")
    func z85() throws {
        let vector = Data([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])
        #expect(Z85.encode(vector) == "HelloWorld")
        #expect(Z85.decode("HelloWorld") == vector)
        #expect(Z85.encode(Data()) == "")
        #expect(Z85.decode("") == Data())

        var generator = SystemRandomNumberGenerator()
        let random = Data((0..<64).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let text = try #require(Z85.encode(random))
        #expect(text.count == 80)
        #expect(Z85.decode(text) == random)
    }

    @Test("Z85 rejects input of the wrong length or with characters outside the alphabet")
    func z85Invalid() {
        #expect(Z85.encode(Data([1, 2, 3])) == nil)
        #expect(Z85.decode("Hell") == nil)
        #expect(Z85.decode("Hello World") == nil)
        #expect(Z85.decode("Hello Worl") == nil)  // Space is not in the alphabet.
        #expect(Z85.decode("HelloWor\u{0}d") == nil)
        #expect(Z85.decode("HelloWorlé") == nil)
        #expect(Z85.decode("#####") == nil)  // 84 * 85^4 + ... overflows 32 bits.
    }

    @Test("CURVE REQ/REP works with the right server key", .enabled(if: Curve.isAvailable))
    func curveExchange() throws {
        let server = try Curve.generateKeyPair()
        let client = try Curve.generateKeyPair()
        let context = try Context()
        let rep = try context.testSocket(.rep)
        let req = try context.testSocket(.req)
        try rep.setOption(.curveServer, true)
        try rep.setOption(.curveSecretKey, server.secretKey)
        try rep.bind("tcp://127.0.0.1:*")
        try req.setOption(.curveServerKey, server.publicKey)
        try req.setOption(.curvePublicKey, client.publicKey)
        try req.setOption(.curveSecretKey, client.secretKey)
        try req.connect(try rep.lastEndpoint)

        #expect(try req.send([frame("secret question")]))
        #expect(texts(try rep.receive()) == ["secret question"])
        #expect(try rep.send([frame("secret answer")]))
        #expect(texts(try req.receive()) == ["secret answer"])
    }

    @Test("CURVE with the wrong server key never gets through", .enabled(if: Curve.isAvailable))
    func wrongServerKey() throws {
        let server = try Curve.generateKeyPair()
        let impostor = try Curve.generateKeyPair()
        let client = try Curve.generateKeyPair()
        let context = try Context()
        let rep = try context.testSocket(.rep, timeout: 300)
        let req = try context.testSocket(.req, timeout: 300)
        try rep.setOption(.curveServer, true)
        try rep.setOption(.curveSecretKey, server.secretKey)
        try rep.bind("tcp://127.0.0.1:*")
        try req.setOption(.curveServerKey, impostor.publicKey)
        try req.setOption(.curvePublicKey, client.publicKey)
        try req.setOption(.curveSecretKey, client.secretKey)
        try req.connect(try rep.lastEndpoint)

        // The request is queued, but the handshake fails, so it is never delivered.
        #expect(try req.send([frame("hello?")]))
        #expect(try rep.receive() == nil)
    }
}
