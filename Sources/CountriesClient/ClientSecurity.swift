import ZeroMQ

/// The CURVE keys a client connects with: its own key pair and the server's public key (Z85).
public struct ClientSecurity: Sendable, Equatable {
    /// The client's public key.
    public var publicKey: String
    /// The client's secret key.
    public var secretKey: String
    /// The service's public key.
    public var serverKey: String

    /// Creates client keys.
    public init(publicKey: String, secretKey: String, serverKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.serverKey = serverKey
    }

    /// Turns CURVE on for `socket` as a client.
    public func apply(to socket: Socket) throws(ZMQError) {
        try socket.setOption(.curveServerKey, serverKey)
        try socket.setOption(.curvePublicKey, publicKey)
        try socket.setOption(.curveSecretKey, secretKey)
    }
}
