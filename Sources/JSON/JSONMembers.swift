/// A JSON object's members in the order they came, each key once
/// (``JSONParser/parseMembers(_:maximumNesting:)``): what a decoder of one small object, a
/// request, reads field by field.
///
/// A look-up compares the key with each member's. For the few short keys of a protocol message
/// that is cheaper than hashing them into a dictionary, as ``JSONValue/object(_:)`` does: about
/// 5,000 instructions of a toggle's 73,000 went to hashing its keys.
public struct JSONMembers: Sendable {
    /// One member.
    public struct Member: Sendable, Equatable {
        /// Its key.
        public let key: String
        /// Its value.
        public let value: JSONValue
    }

    /// The members, in order.
    public private(set) var members: [Member] = []
    /// The keys, once there are more than ``linearLimit``: beyond that, checking each new key
    /// against every member would make a large object cost its square.
    private var keys: Set<String>?
    /// Members checked for a duplicate one by one.
    static let linearLimit = 16

    /// No members.
    public init() {}

    /// No members yet, with room for `capacity` of them: an array grown from empty reallocates
    /// at each of a request's first members.
    init(capacity: Int) {
        members.reserveCapacity(capacity)
    }

    /// The value under `key`, if the object has it.
    public subscript(key: String) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// Adds a member; false, adding nothing, when the object already has `key`.
    mutating func add(_ key: String, _ value: JSONValue) -> Bool {
        if let inserted = keys?.insert(key).inserted {
            guard inserted else { return false }
        } else {
            if members.contains(where: { $0.key == key }) { return false }
            if members.count == Self.linearLimit { keys = Set(members.map(\.key) + [key]) }
        }
        members.append(Member(key: key, value: value))
        return true
    }
}
