import CountriesCore

/// A store's identity (docs/PROTOCOL.md, "Store identity"): a random id minted when a store is
/// created, so that a seq is always read together with the store it belongs to.
///
/// 128 random bits as 32 lowercase hex digits: two stores never share one in practice, and the
/// id is plain printable ASCII that fits any log line or file name.
public enum StoreIdentity {
    /// A new random id.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return make(using: &generator)
    }

    /// A new id from `generator` (tests pass a seeded one).
    public static func make(using generator: inout some RandomNumberGenerator) -> String {
        let digits = Array("0123456789abcdef")
        var id = ""
        id.reserveCapacity(Limits.storeIdentityBytes)
        for _ in 0..<2 {
            var bits = generator.next()
            for _ in 0..<16 {
                id.append(digits[Int(bits & 0xF)])
                bits >>= 4
            }
        }
        return id
    }

    /// Whether `text` has the shape of an id this service makes (32 lowercase hex digits).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == Limits.storeIdentityBytes
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
