/// A member's value as
/// ``JSONParser/visitMembers(_:maximumNesting:_:)-(UnsafeRawBufferPointer,_,_)`` hands it: a string
/// stays where it lies in the input (``JSONText``) until the decoder asks for it, any other value
/// is decoded.
///
/// A request's op is compared and dropped, and its other strings are kept only when their keys
/// are known: none of them needs a `String` on the way (docs/BENCHMARKS.md, "Stop 59").
public enum JSONMemberValue {
    /// A string, valid only while the input's bytes are.
    case text(JSONText)
    /// Any other value.
    case other(JSONValue)

    /// The value decoded, as ``JSONParser/parse(_:maximumNesting:)-swift.type.method`` gives it.
    public var decoded: JSONValue {
        switch self {
        case .text(let text): return .string(text.string)
        case .other(let value): return value
        }
    }

    /// Whether it is `null`.
    public var isNull: Bool {
        if case .other(.null) = self { return true }
        return false
    }

    /// The JSON type's name, for error messages.
    public var typeName: String {
        switch self {
        case .text: return JSONValue.string("").typeName
        case .other(let value): return value.typeName
        }
    }
}
