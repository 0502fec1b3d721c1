/// Names that take the most bytes a name may: `characters` characters and `scalars` Unicode
/// scalars in all, every scalar 4 bytes of UTF-8 (a CJK ideograph of plane 2, extended into one
/// character by variation selectors of plane 14); the first two characters differ from name to
/// name, so up to 960 x 960 names are distinct.
///
/// For the largest event the service can publish: a reset of the largest list, each name of
/// `Limits.maximumNameLength` characters and `Limits.maximumNameScalars` scalars.
public func longestNames(count: Int, characters: Int, scalars: Int) -> [String] {
    precondition(count <= 960 * 960 && characters >= 2 && scalars % characters == 0)
    let ideograph: UInt32 = 0x20000
    let selectors = (0..<scalars / characters - 1).map { Unicode.Scalar(0xE0100 + UInt32($0 % 240))! }
    func character(_ base: UInt32) -> String {
        var text = String(Unicode.Scalar(ideograph + base)!)
        text.unicodeScalars.append(contentsOf: selectors)
        return text
    }
    let filler = String(repeating: character(0), count: characters - 2)
    return (0..<count).map { character(UInt32($0 % 960)) + character(UInt32($0 / 960)) + filler }
}
