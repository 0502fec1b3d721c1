/// A string of an object that
/// ``JSONParser/visitMembers(_:maximumNesting:_:)-(UnsafeRawBufferPointer,_,_)`` visits, a key or a
/// value: compared with the strings a decoder knows without becoming a `String`, and made one only
/// when the decoder keeps it.
///
/// A string of plain ASCII without escapes (every key of the protocol, and most values) is its
/// bytes in the input, valid only while the input's bytes are: do not keep one past them. Any
/// other string is decoded text.
public struct JSONText {
    enum Storage {
        /// Bytes of the input, each below 0x80: valid UTF-8 as they are.
        case ascii(UnsafeRawBufferPointer)
        /// A key with escapes or non-ASCII characters, decoded and validated.
        case text(String)
    }

    let storage: Storage

    init(_ storage: Storage) {
        self.storage = storage
    }

    /// The text's bytes in the input when they are plain ASCII without escapes (each from 0x20
    /// to 0x7F: JSON refuses raw control characters), else nil; valid as the text is.
    public var asciiBytes: UnsafeRawBufferPointer? {
        if case .ascii(let bytes) = storage { return bytes }
        return nil
    }

    /// The text as a `String`.
    public var string: String {
        switch storage {
        case .ascii(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .text(let text): return text
        }
    }

    /// Whether the text is `name`, compared byte by byte.
    public static func == (text: JSONText, name: StaticString) -> Bool {
        let expected = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return text.hasBytes(expected)
    }

    /// Whether two texts are the same.
    static func == (lhs: JSONText, rhs: JSONText) -> Bool {
        switch rhs.storage {
        case .ascii(let bytes): return lhs.hasBytes(bytes)
        case .text(var text): return text.withUTF8 { lhs.hasBytes(UnsafeRawBufferPointer($0)) }
        }
    }

    private func hasBytes(_ expected: UnsafeRawBufferPointer) -> Bool {
        switch storage {
        case .ascii(let bytes): return Self.equal(bytes, expected)
        case .text(let text): return text.utf8.elementsEqual(expected)
        }
    }

    /// Byte by byte: a protocol key or op is a few bytes, for which a plain loop beats the generic
    /// `elementsEqual` (about 150 instructions a comparison) and a call to `memcmp`.
    private static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for offset in 0..<lhs.count where lhs[offset] != rhs[offset] { return false }
        return true
    }
}
