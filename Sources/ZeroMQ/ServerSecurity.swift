import Foundation

/// CURVE for the service: its own certificate and the directories of client public keys it
/// admits. With it, both sockets encrypt, and only listed clients get through.
public struct ServerSecurity: Sendable, Equatable {
    /// The service's certificate, with its secret key.
    public var certificate: CurveCertificate
    /// Directories of `.pub` files whose clients may read and change.
    public var readWriteDirectories: [String]
    /// Directories of `.pub` files whose clients may read and subscribe only.
    public var readOnlyDirectories: [String]

    /// Creates the settings.
    public init(
        certificate: CurveCertificate, readWriteDirectories: [String], readOnlyDirectories: [String] = []
    ) {
        self.certificate = certificate
        self.readWriteDirectories = readWriteDirectories
        self.readOnlyDirectories = readOnlyDirectories
    }
}
