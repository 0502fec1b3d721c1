import CZeroMQ
import Foundation

/// CURVE (CurveZMQ) key helpers.
///
/// Without a ZAP handler in the process, libzmq 4.3 lets any client key through: CURVE then
/// encrypts and authenticates the server, but does not restrict who may connect.
public enum Curve {
    /// Whether this libzmq was built with CURVE support (`zmq_has("curve")`).
    public static var isAvailable: Bool {
        zmq_has("curve") != 0
    }

    /// Makes a new long-term key pair (`zmq_curve_keypair`).
    ///
    /// Throws `ENOTSUP` when libzmq has no CURVE support.
    public static func generateKeyPair() throws(ZMQError) -> CurveKeyPair {
        // Z85 keys are 40 characters; libzmq writes a NUL after them.
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        if zmq_curve_keypair(&publicKey, &secretKey) != 0 {
            throw ZMQError.last("curveKeyPair")
        }
        return CurveKeyPair(
            publicKey: String(decoding: publicKey.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self),
            secretKey: String(decoding: secretKey.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        )
    }

    /// Derives the Z85 public key of a Z85 secret key (`zmq_curve_public`).
    ///
    /// Throws `EINVAL` unless `secretKey` is 40 characters of valid Z85.
    public static func publicKey(forSecretKey secretKey: String) throws(ZMQError) -> String {
        // zmq_curve_public decodes strlen(key) characters into a 32-byte buffer, so anything
        // but 40 valid characters must be stopped here.
        guard secretKey.utf8.count == 40, Z85.decode(secretKey) != nil else {
            throw ZMQError(code: EINVAL, operation: "curvePublicKey(forSecretKey:)")
        }
        var publicKey = [CChar](repeating: 0, count: 41)
        if zmq_curve_public(&publicKey, secretKey) != 0 {
            throw ZMQError.last("curvePublicKey(forSecretKey:)")
        }
        return String(decoding: publicKey.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A CURVE long-term key pair, each key 40 characters of Z85 text.
public struct CurveKeyPair: Sendable, Equatable {
    /// The public key; give it to peers (as ``SocketOption/curveServerKey`` for a server's).
    public var publicKey: String
    /// The secret key; keep it private.
    public var secretKey: String

    /// Creates a key pair from Z85 keys, e.g. ones read from a file.
    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

/// ZeroMQ's Base-85 text encoding (ZMQ RFC 32), used for CURVE keys.
public enum Z85 {
    /// The 85 characters of the alphabet, in value order.
    private static let alphabet = Set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    /// Encodes `data` (`zmq_z85_encode`); nil unless its length is a multiple of 4.
    /// Empty data encodes to the empty string.
    public static func encode(_ data: Data) -> String? {
        guard data.count % 4 == 0 else { return nil }
        guard !data.isEmpty else { return "" }  // libzmq rejects empty input; keep it a round trip.
        var text = [CChar](repeating: 0, count: data.count / 4 * 5 + 1)
        let result = data.withUnsafeBytes { bytes in
            zmq_z85_encode(&text, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
        }
        guard result != nil else { return nil }
        return String(decoding: text.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes Z85 text (`zmq_z85_decode`); nil unless its length is a multiple of 5 and every
    /// character and 5-character group is valid. The empty string decodes to empty data.
    public static func decode(_ text: String) -> Data? {
        let utf8 = Array(text.utf8)
        // Checked here as well as in libzmq: a NUL would silently shorten the C string.
        guard utf8.count % 5 == 0, utf8.allSatisfy(alphabet.contains) else { return nil }
        guard !utf8.isEmpty else { return Data() }  // libzmq rejects empty input; keep it a round trip.
        var data = [UInt8](repeating: 0, count: utf8.count / 5 * 4)
        let result = text.withCString { zmq_z85_decode(&data, $0) }
        guard result != nil else { return nil }
        return Data(data)
    }
}
