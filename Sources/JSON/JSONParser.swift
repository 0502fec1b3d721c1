import Foundation

/// A small, strict JSON parser (RFC 8259) from UTF-8 bytes to ``JSONValue``: every frame the
/// project reads (requests, replies, events, heartbeats, seed files, etcd's answers) goes through
/// it.
///
/// It replaced `JSONDecoder`, which tried each type in turn and cost a third of the service's
/// time per toggle. What it accepts and how it types numbers follow that decoder, which the tests
/// keep as the reference:
/// - an integer that fits `Int64` is `.integer`, one above that fits `UInt64` is `.unsigned`, a
///   larger one is `.number` (a `Double`); a number with a fraction or exponent whose decimal
///   value is *exactly* an integer in those ranges is typed the same way (`1.0` and `1e2` are
///   integers), any other is `.number`, even when it rounds to a whole `Double`
///   (`0.99999999999999999999` and `1e-400` are not integers);
/// - a number out of `Double`'s range is refused; so are `NaN`, `Infinity` and leading zeros;
/// - strings must be valid UTF-8 with no raw control characters; `\u` escapes must pair
///   surrogates; a leading byte-order mark is skipped.
/// Unlike that decoder it refuses trailing commas (`[1,]`), which are not JSON, a key given
/// twice in one object (parsers differ on which value counts; see docs/PROTOCOL.md), and arrays
/// and objects nested deeper than the caller's `maximumNesting`, counted as it descends: the
/// recursion stays that shallow whatever arrives, and the time stays linear in the input.
public struct JSONParser {
    /// The nesting limit when the caller gives none: the outermost array or object counts as 1.
    public static let defaultMaximumNesting = 16

    /// Why a frame is not JSON, or not JSON the project reads; the request decoder turns each
    /// into its own `bad_request` message.
    public enum Failure: Error, Equatable, Sendable {
        /// Not JSON (RFC 8259), or a number out of `Double`'s range.
        case notJSON
        /// An object has this key more than once.
        case duplicateKey(String)
        /// Arrays and objects nest deeper than the parser's `maximumNesting`.
        case tooDeep
    }

    /// Parses one JSON value that fills `data` (whitespace around it allowed), refusing arrays and
    /// objects nested deeper than `maximumNesting` (the outermost counting as 1).
    public static func parse(
        _ data: Data, maximumNesting: Int = defaultMaximumNesting
    ) throws(Failure) -> JSONValue {
        let parsed = data.withUnsafeBytes { bytes in
            Result { () throws(Failure) in try parse(bytes, maximumNesting: maximumNesting) }
        }
        return try parsed.get()
    }

    /// Parses one JSON value that fills `bytes` (whitespace around it allowed), refusing arrays
    /// and objects nested deeper than `maximumNesting` (the outermost counting as 1).
    public static func parse(
        _ bytes: UnsafeRawBufferPointer, maximumNesting: Int = defaultMaximumNesting
    ) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maximumNesting: maximumNesting)
        return try parser.document()
    }

    /// Parses as ``parse(_:maximumNesting:)-swift.type.method`` does, and says where a failure is:
    /// for files people edit (seed files), where "not JSON" alone leaves them searching.
    public static func parseLocating(
        _ data: Data, maximumNesting: Int = defaultMaximumNesting
    ) throws(LocatedFailure) -> JSONValue {
        let parsed = data.withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes, maximumNesting: maximumNesting)
            return Result { () throws(LocatedFailure) in
                do throws(Failure) {
                    return try parser.document()
                } catch {
                    throw LocatedFailure(error, at: parser.position, in: bytes)
                }
            }
        }
        return try parsed.get()
    }

    /// The value that fills the input, from its start.
    private mutating func document() throws(Failure) -> JSONValue {
        startDocument()
        let value = try value(depth: 0)
        try endDocument()
        return value
    }

    /// Past a UTF-8 byte-order mark (as JSONDecoder skips it) and whitespace.
    mutating func startDocument() {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        skipWhitespace()
    }

    /// Only whitespace after the value.
    mutating func endDocument() throws(Failure) {
        skipWhitespace()
        guard position == bytes.count else { throw .notJSON }
    }

    /// The input (internal, like `position`, for the extensions in the other files).
    let bytes: UnsafeRawBufferPointer
    private let maximumNesting: Int
    /// Where the parser reads next.
    var position = 0

    init(bytes: UnsafeRawBufferPointer, maximumNesting: Int) {
        self.bytes = bytes
        self.maximumNesting = maximumNesting
    }

    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard position < bytes.count, bytes[position] == byte else { throw .notJSON }
        position += 1
    }

    private mutating func literal(_ text: StaticString) throws(Failure) {
        let count = text.utf8CodeUnitCount
        guard bytes.count - position >= count else { throw .notJSON }
        let start = text.utf8Start
        for offset in 0..<count where bytes[position + offset] != start[offset] { throw .notJSON }
        position += count
    }

    mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard let byte = peek() else { throw .notJSON }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw .notJSON
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        var fields: [String: JSONValue] = [:]
        // Room for a top-level object of the protocol (replies, events: 3 to 7 keys) at once: a
        // dictionary grown from empty rehashes at 1, 2 and 4 keys. Only at the top, so many
        // small nested objects cannot each take room for 8.
        if depth == 1 { fields.reserveCapacity(8) }
        try members(depth: depth) { key, value in
            fields.updateValue(value.decoded, forKey: key.string) == nil
        }
        return .object(fields)
    }

    /// The members of the object at `position`, at nesting `depth`, each handed to `add`, which
    /// says false for a key the object already had.
    mutating func members(depth: Int, _ add: (JSONText, JSONMemberValue) -> Bool) throws(Failure) {
        guard depth <= maximumNesting else { throw .tooDeep }
        position += 1  // {
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            guard peek() == UInt8(ascii: "\"") else { throw .notJSON }
            let keyStart = position
            let key = try text()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            let element: JSONMemberValue =
                peek() == UInt8(ascii: "\"") ? .text(try text()) : .other(try value(depth: depth))
            if !add(key, element) {
                position = keyStart  // where a located failure points: the second key
                throw .duplicateKey(key.string)
            }
            skipWhitespace()
            // Checked before moving on, so a failure's position is the byte that is wrong.
            guard let next = peek(), next == UInt8(ascii: "}") || next == UInt8(ascii: ",") else {
                throw .notJSON
            }
            position += 1
            if next == UInt8(ascii: "}") { return }
            skipWhitespace()
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maximumNesting else { throw .tooDeep }
        position += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard let next = peek(), next == UInt8(ascii: "]") || next == UInt8(ascii: ",") else {
                throw .notJSON
            }
            position += 1
            if next == UInt8(ascii: "]") { return .array(elements) }
            skipWhitespace()
        }
    }

    // MARK: Strings

    /// The string at `position`: its bytes as they are when they are plain ASCII without escapes
    /// (no `String` made for a key or a value the caller only compares), else decoded.
    private mutating func text() throws(Failure) -> JSONText {
        var end = position + 1
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[(position + 1)..<end])
                position = end + 1
                return JSONText(.ascii(raw))
            }
            // An escape, a control character (refused by `string()`) or UTF-8 to validate.
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            end += 1
        }
        return JSONText(.text(try string()))
    }

    private mutating func string() throws(Failure) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: no escapes. Bytes are copied once, and validated as UTF-8 by the String.
        var ascii = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
                // ASCII is valid UTF-8 as it is: `String(decoding:)` takes it without the generic
                // validation, which cost about 1,000 instructions per string (every request's
                // keys).
                if ascii {
                    position += 1
                    return String(decoding: raw.bindMemory(to: UInt8.self), as: UTF8.self)
                }
                guard let text = validated(raw) else {
                    position = start - 1  // where a located failure points: the string
                    throw .notJSON
                }
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .notJSON }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        guard position < bytes.count else { throw .notJSON }
        // Slow path: collect bytes, decoding escapes.
        var collected = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                let text = collected.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
                guard let text else {
                    position = start - 1  // where a located failure points: the string
                    throw .notJSON
                }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &collected)
            case 0..<0x20:
                throw .notJSON
            default:
                collected.append(byte)
            }
        }
        throw .notJSON
    }

    private func validated(_ raw: UnsafeRawBufferPointer) -> String? {
        String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self)
    }

    private mutating func escape(into collected: inout [UInt8]) throws(Failure) {
        guard let byte = peek() else { throw .notJSON }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): collected.append(byte)
        case UInt8(ascii: "b"): collected.append(0x08)
        case UInt8(ascii: "f"): collected.append(0x0C)
        case UInt8(ascii: "n"): collected.append(0x0A)
        case UInt8(ascii: "r"): collected.append(0x0D)
        case UInt8(ascii: "t"): collected.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hex4())
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                try expect(UInt8(ascii: "\\"))
                try expect(UInt8(ascii: "u"))
                let low = UInt32(try hex4())
                guard (0xDC00...0xDFFF).contains(low) else { throw .notJSON }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw .notJSON
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw .notJSON }
            collected.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw .notJSON
        }
    }

    private mutating func hex4() throws(Failure) -> UInt16 {
        guard bytes.count - position >= 4 else { throw .notJSON }
        var result: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .notJSON
            }
            result = result << 4 | UInt16(digit)
            position += 1
        }
        return result
    }
}
