/// A member of the cluster, as the member list gives it.
public struct EtcdMember: Sendable, Equatable {
    /// The member's ID.
    public var id: UInt64
    /// Its name (empty while a member added is not started yet).
    public var name: String
    /// The URLs clients reach it at.
    public var clientURLs: [String]
    /// The URLs its peers reach it at.
    public var peerURLs: [String]

    /// A member with these fields.
    public init(id: UInt64, name: String, clientURLs: [String], peerURLs: [String]) {
        self.id = id
        self.name = name
        self.clientURLs = clientURLs
        self.peerURLs = peerURLs
    }
}
