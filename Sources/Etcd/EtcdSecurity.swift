/// How a client proves who it is to etcd and checks that it speaks to etcd: TLS with a CA and a
/// client certificate (etcd's `--trusted-ca-file` and `--client-cert-auth`), and an etcd user
/// (etcd's `auth enable`). Each part is optional; the default is plain HTTP, no user.
public struct EtcdSecurity: Sendable, Equatable {
    /// The CA bundle that signed the members' certificates (etcdctl's `--cacert`); nil: the
    /// system's CAs.
    public var certificateAuthorityFile: String?
    /// The client certificate presented to the members (etcdctl's `--cert`), PEM.
    public var certificateFile: String?
    /// The client certificate's private key (etcdctl's `--key`), PEM.
    public var keyFile: String?
    /// The etcd user the client authenticates as, nil for none.
    public var user: EtcdUser?

    /// No TLS files, no user.
    public init(
        certificateAuthorityFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil,
        user: EtcdUser? = nil
    ) {
        self.certificateAuthorityFile = certificateAuthorityFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.user = user
    }
}

/// An etcd user and its password. The password never appears in descriptions or logs.
public struct EtcdUser: Sendable, Equatable, CustomStringConvertible {
    /// The user's name.
    public var name: String
    /// The user's password.
    public var password: String

    /// A user with this name and password.
    public init(name: String, password: String) {
        self.name = name
        self.password = password
    }

    public var description: String { "etcd user \(name)" }
}
