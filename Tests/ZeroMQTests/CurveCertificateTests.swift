import Foundation
import Testing
import ZeroMQ

@Suite("CurveCertificate (CZMQ zcert text)")
struct CurveCertificateTests {
    @Test("A secret certificate's text reads back as the same key pair", .enabled(if: Curve.isAvailable))
    func secretRoundTrip() throws {
        let pair = try Curve.generateKeyPair()
        let certificate = CurveCertificate(publicKey: pair.publicKey, secretKey: pair.secretKey)
        let text = certificate.secretText(name: "alice")
        #expect(text.contains("**Secret**"))
        #expect(text.contains("name = \"alice\""))
        #expect(try CurveCertificate.parse(text) == certificate)
    }

    @Test("A public certificate's text reads back as the public key alone", .enabled(if: Curve.isAvailable))
    func publicRoundTrip() throws {
        let pair = try Curve.generateKeyPair()
        let certificate = CurveCertificate(publicKey: pair.publicKey, secretKey: pair.secretKey)
        let text = certificate.publicText(name: "alice")
        #expect(!text.contains(pair.secretKey))
        #expect(!text.contains("secret-key"))
        let parsed = try CurveCertificate.parse(text)
        #expect(parsed.publicKey == pair.publicKey)
        #expect(parsed.secretKey == nil)
    }

    @Test("A file holding one bare Z85 key is that public key", .enabled(if: Curve.isAvailable))
    func bareKey() throws {
        let pair = try Curve.generateKeyPair()
        #expect(try CurveCertificate.parse(pair.publicKey) == CurveCertificate(publicKey: pair.publicKey))
        #expect(
            try CurveCertificate.parse("# a comment\n\n  \(pair.publicKey)  \n")
                == CurveCertificate(publicKey: pair.publicKey))
    }

    @Test("A secret certificate without its public-key gets it derived", .enabled(if: Curve.isAvailable))
    func derivedPublicKey() throws {
        let pair = try Curve.generateKeyPair()
        let text = "metadata\ncurve\n    secret-key = \"\(pair.secretKey)\"\n"
        #expect(
            try CurveCertificate.parse(text)
                == CurveCertificate(publicKey: pair.publicKey, secretKey: pair.secretKey))
    }

    @Test("A public-key that does not belong to the secret-key is refused", .enabled(if: Curve.isAvailable))
    func mismatchedPair() throws {
        let one = try Curve.generateKeyPair()
        let other = try Curve.generateKeyPair()
        let text = CurveCertificate(publicKey: other.publicKey, secretKey: one.secretKey).secretText(
            name: "x")
        let error = #expect(throws: CurveCertificate.ParseError.self) { try CurveCertificate.parse(text) }
        #expect(error?.description.contains("does not belong") == true)
    }

    @Test(
        "Text that is not a certificate is refused",
        arguments: [
            "",
            "hello",
            "metadata\ncurve\n",
            "curve\n    public-key = \"short\"\n",
            "curve\n    public-key = \"\(String(repeating: " ", count: 40))\"\n",
            "curve\n    secret-key = \"\(String(repeating: "~", count: 40))\"\n",
            String(repeating: "~", count: 40),
            String(repeating: "a", count: 41),
            "#   ZeroMQ CURVE Public Certificate\n#   public-key = \"nothing here but comments\"\n",
        ])
    func garbage(_ text: String) {
        #expect(throws: CurveCertificate.ParseError.self) { try CurveCertificate.parse(text) }
    }

    @Test("A file written by CZMQ's zcert_save reads back", .enabled(if: Curve.isAvailable))
    func czmqFormat() throws {
        // The layout zcert_save_secret writes (tabs and all), with a real key pair in it.
        let pair = try Curve.generateKeyPair()
        let text = """
            #   ****  Generated on 2024-01-01 00:00:00 by CZMQ  ****
            #   ZeroMQ CURVE **Secret** Certificate
            #   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.

            metadata
                email = "ops@example.com"
            curve
                public-key = "\(pair.publicKey)"
                secret-key = "\(pair.secretKey)"

            """
        #expect(
            try CurveCertificate.parse(text)
                == CurveCertificate(publicKey: pair.publicKey, secretKey: pair.secretKey))
    }
}
