import Foundation

/// CURVE keys as text files, in the ZPL certificate format of CZMQ's `zcert` (so files made by
/// other ZeroMQ tools can be used here, and ours there).
///
/// A public certificate holds only `public-key`; a secret one holds both keys:
///
/// ```text
/// #   ZeroMQ CURVE **Secret** Certificate
/// #   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.
///
/// metadata
/// curve
///     public-key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
///     secret-key = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
/// ```
///
/// A file holding nothing but one 40-character Z85 key is read as that key, too.
public struct CurveCertificate: Sendable, Equatable {
    /// The Z85 public key.
    public var publicKey: String
    /// The Z85 secret key, for a secret certificate.
    public var secretKey: String?

    /// Creates a certificate.
    public init(publicKey: String, secretKey: String? = nil) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Why a certificate text could not be read.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong with the text.
        public var description: String
    }

    /// Reads a certificate. A secret certificate without a `public-key` gets it derived.
    public static func parse(_ text: String) throws(ParseError) -> CurveCertificate {
        var publicKey: String?
        var secretKey: String?
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        for line in lines where !line.hasPrefix("#") {
            if let value = Self.value(of: "public-key", in: line) { publicKey = value }
            if let value = Self.value(of: "secret-key", in: line) { secretKey = value }
        }
        let meaningful = lines.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        if publicKey == nil, secretKey == nil, meaningful.count == 1, meaningful[0].utf8.count == 40 {
            publicKey = meaningful[0]
        }
        for (name, key) in [("public-key", publicKey), ("secret-key", secretKey)] {
            if let key, key.utf8.count != 40 || Z85.decode(key) == nil {
                throw ParseError(description: "its \(name) is not 40 characters of Z85")
            }
        }
        if let secretKey {
            guard let derived = try? Curve.publicKey(forSecretKey: secretKey) else {
                throw ParseError(description: "its secret-key is not a CURVE key")
            }
            if let publicKey, publicKey != derived {
                throw ParseError(description: "its public-key does not belong to its secret-key")
            }
            return CurveCertificate(publicKey: derived, secretKey: secretKey)
        }
        guard let publicKey else {
            throw ParseError(description: "it holds no public-key (is it a CURVE certificate?)")
        }
        return CurveCertificate(publicKey: publicKey)
    }

    /// The public certificate's text (safe to share).
    public func publicText(name: String) -> String {
        """
        #   ZeroMQ CURVE Public Certificate for \(name)
        #   Exchange securely, or use a secure mechanism to verify the contents
        #   of this file after exchange. Store public certificates in your home
        #   directory, in the .curve subdirectory.

        metadata
            name = "\(name)"
        curve
            public-key = "\(publicKey)"

        """
    }

    /// The secret certificate's text (keep it private: mode 0600).
    public func secretText(name: String) -> String {
        """
        #   ZeroMQ CURVE **Secret** Certificate for \(name)
        #   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.

        metadata
            name = "\(name)"
        curve
            public-key = "\(publicKey)"
            secret-key = "\(secretKey ?? "")"

        """
    }

    private static func value(of key: String, in line: String) -> String? {
        guard line.hasPrefix(key) else { return nil }
        let rest = line.dropFirst(key.count).trimmingCharacters(in: .whitespaces)
        guard rest.hasPrefix("=") else { return nil }
        var value = rest.dropFirst().trimmingCharacters(in: .whitespaces)
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
            value = String(value.dropFirst().dropLast())
        }
        return value
    }
}
