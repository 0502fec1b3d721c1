import Foundation

/// Writes JSON by hand, byte by byte: the exact bytes `JSONEncoder` writes with
/// `[.sortedKeys, .withoutEscapingSlashes]` (`/` unescaped, control characters as
/// `\b \t \n \f \r` or `\u00xx`), at a fraction of its cost. Callers that write objects member
/// by member give the keys in sorted order themselves; ``value(_:)`` sorts them.
///
/// The bytes live in one buffer of its own, written through a pointer, and a writer cannot be
/// copied (it owns that buffer). Appending to a `[UInt8]` cost about 100 instructions per
/// append, several per member of every reply, event and canonical form (docs/BENCHMARKS.md,
/// "Stop 37").
public struct JSONWriter: ~Copyable {
    /// The buffer: from `malloc` when ``ownsBuffer``, else lent by ``encode(_:capacity:as:_:)``.
    @usableFromInline var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Whether the buffer is this writer's to grow in place and free.
    private var ownsBuffer = true
    /// How many bytes are written.
    public private(set) var count = 0

    /// An empty writer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 128) {
        self.capacity = max(capacity, 16)
        start = JSONWriter.allocate(self.capacity)
    }

    /// An empty writer on `buffer`, which it must not free: past its end it moves to memory of
    /// its own.
    @usableFromInline init(lent buffer: UnsafeMutableBufferPointer<UInt8>) {
        start = buffer.baseAddress!
        capacity = buffer.count
        ownsBuffer = false
    }

    deinit { if ownsBuffer { free(start) } }

    /// What `write` writes of `value`, as `Output` (`Data` unless asked otherwise), written first
    /// into memory on the stack when `capacity` is small: a service encodes a reply, an event and
    /// a canonical form per change, and a buffer from `malloc` for each was an allocation and a
    /// free apiece (docs/BENCHMARKS.md, "Stop 52"). `capacity` is a guess; the writer grows past
    /// it. Inlinable, so that each caller gets it made for its `Output` (a generic call across
    /// modules cost about 300 instructions per encoding, docs/BENCHMARKS.md, "Stop 58").
    /// `value` is handed to `write` rather than captured by it: a closure that captured a reply
    /// copied it whole first (docs/BENCHMARKS.md, "Stop 60").
    @inlinable @inline(__always)
    public static func encode<Value, Output: JSONOutput>(
        _ value: Value, capacity: Int, as output: Output.Type = Data.self,
        _ write: (inout JSONWriter, Value) -> Void
    ) -> Output {
        guard capacity <= largestOnStack else {
            var writer = JSONWriter(capacity: capacity)
            write(&writer, value)
            return writer.finish(as: output)
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(capacity, 16)) { buffer in
            var writer = JSONWriter(lent: buffer)
            write(&writer, value)
            return writer.finish(as: output)
        }
    }

    /// The most ``encode(_:capacity:as:_:)`` writes on the stack at first.
    public static let largestOnStack = 1_024

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<UInt8> {
        guard let memory = malloc(capacity) else { fatalError("out of memory for \(capacity) bytes of JSON") }
        return memory.assumingMemoryBound(to: UInt8.self)
    }

    /// A copy of the bytes written so far.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: start, count: count)) }

    /// The bytes written, as `Output` (`Data` unless asked otherwise); the writer is gone after.
    @inlinable
    public consuming func finish<Output: JSONOutput>(as output: Output.Type = Data.self) -> Output {
        // A copy: `Data(bytesNoCopy:)` saved it but cost more when freed (its deallocator).
        Output(copyingJSON: UnsafeBufferPointer(start: start, count: count))
    }

    /// Room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if capacity - count < extra { grow(extra) }
    }

    private mutating func grow(_ extra: Int) {
        let wanted = max(capacity * 2, count + extra)
        if !ownsBuffer {
            let moved = JSONWriter.allocate(wanted)
            moved.update(from: start, count: count)
            start = moved
            ownsBuffer = true
        } else {
            guard let moved = realloc(start, wanted) else {
                fatalError("out of memory for \(wanted) bytes of JSON")
            }
            start = moved.assumingMemoryBound(to: UInt8.self)
        }
        capacity = wanted
    }

    /// Appends `length` bytes from `source`.
    @inline(__always)
    private mutating func append(_ source: UnsafePointer<UInt8>, _ length: Int) {
        reserve(length)
        (start + count).update(from: source, count: length)
        count += length
    }

    /// Appends one byte as it is (a bracket, a comma, a colon).
    @inline(__always)
    public mutating func byte(_ byte: UInt8) {
        reserve(1)
        start[count] = byte
        count += 1
    }

    /// Appends text as it is: it must already be JSON (a literal, a quoted key and its colon).
    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        append(text.utf8Start, text.utf8CodeUnitCount)
    }

    /// `true` or `false`.
    public mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }

    /// An unsigned integer in decimal.
    public mutating func unsigned(_ value: UInt64) {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        reserve(digits)
        rest = value
        for offset in stride(from: count + digits - 1, through: count, by: -1) {
            start[offset] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        count += digits
    }

    /// A signed integer in decimal.
    public mutating func integer(_ value: Int) {
        integer(Int64(value))
    }

    /// A signed integer in decimal.
    public mutating func integer(_ value: Int64) {
        if value < 0 {
            byte(UInt8(ascii: "-"))
            unsigned(UInt64(value.magnitude))
        } else {
            unsigned(UInt64(value))
        }
    }

    /// A string, quoted, with `"`, `\` and control characters escaped (`/` is not).
    public mutating func string(_ value: String) {
        byte(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            // Runs of bytes that need no escape are appended whole; most strings are one run.
            var run = 0
            var position = 0
            let length = utf8.count
            // Eight bytes at a time while none of them needs an escape: a byte-by-byte scan
            // cost about 11 instructions per byte, and every reply and event holds a name.
            while length - position >= 8 {
                let word = UInt64(
                    littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
                if JSONWriter.needsEscape(word) { break }
                position += 8
            }
            while position < length {
                let byte = utf8[position]
                if byte >= 0x20 && byte != 0x22 && byte != 0x5C {
                    position += 1
                    continue
                }
                append(base + run, position - run)
                position += 1
                run = position
                escape(byte)
            }
            append(base + run, length - run)
        }
        byte(UInt8(ascii: "\""))
    }

    /// A string holding the standard base64 of `bytes` (with `=` padding), as
    /// `Data.base64EncodedString()` writes it; none of its characters needs an escape.
    public mutating func base64String(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        reserve((length + 2) / 3 * 4 + 2)
        var out = start + count
        out.pointee = UInt8(ascii: "\"")
        out += 1
        JSONWriter.base64Alphabet.withUTF8Buffer { alphabet in
            var position = 0
            while length - position >= 3 {
                let triple =
                    UInt32(bytes[position]) << 16 | UInt32(bytes[position + 1]) << 8
                    | UInt32(bytes[position + 2])
                out[0] = alphabet[Int(triple >> 18)]
                out[1] = alphabet[Int(triple >> 12 & 0x3F)]
                out[2] = alphabet[Int(triple >> 6 & 0x3F)]
                out[3] = alphabet[Int(triple & 0x3F)]
                out += 4
                position += 3
            }
            if length - position > 0 {
                let second = length - position == 2 ? UInt32(bytes[position + 1]) : 0
                let pair = UInt32(bytes[position]) << 16 | second << 8
                out[0] = alphabet[Int(pair >> 18)]
                out[1] = alphabet[Int(pair >> 12 & 0x3F)]
                out[2] = length - position == 2 ? alphabet[Int(pair >> 6 & 0x3F)] : UInt8(ascii: "=")
                out[3] = UInt8(ascii: "=")
                out += 4
            }
        }
        out.pointee = UInt8(ascii: "\"")
        count = out + 1 - start
    }

    /// ``base64String(_:)`` of a string's UTF-8.
    public mutating func base64String(utf8 text: String) {
        var text = text
        text.withUTF8 { base64String(UnsafeRawBufferPointer($0)) }
    }

    private static let base64Alphabet: StaticString =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// Whether any of the eight bytes of `word` is a control character, `"` or `\\`: the
    /// classic test for a zero byte (`(x - 0x01…) & ~x & 0x80…`), on `word` itself for bytes under
    /// 0x20 and on `word` xor each quote for the two others.
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let quoteZero = (quote &- ones) & ~quote & highs
        let backslashZero = (backslash &- ones) & ~backslash & highs
        return control | quoteZero | backslashZero != 0
    }

    /// The escape of one byte that cannot stand in a JSON string as it is.
    private mutating func escape(_ byte: UInt8) {
        self.byte(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: self.byte(0x22)
        case 0x5C: self.byte(0x5C)
        case 0x08: self.byte(UInt8(ascii: "b"))
        case 0x09: self.byte(UInt8(ascii: "t"))
        case 0x0A: self.byte(UInt8(ascii: "n"))
        case 0x0C: self.byte(UInt8(ascii: "f"))
        case 0x0D: self.byte(UInt8(ascii: "r"))
        default:
            let hex: StaticString = "0123456789abcdef"
            let digits = hex.utf8Start
            raw("u00")
            self.byte(digits[Int(byte >> 4)])
            self.byte(digits[Int(byte & 0xF)])
        }
    }

    /// Any value: objects with their keys sorted, numbers as ``JSONParser`` reads them back
    /// (a `.number` in Swift's shortest form that round-trips; it must be finite).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): bool(flag)
        case .integer(let number): integer(number)
        case .unsigned(let number): unsigned(number)
        case .number(let number):
            var text = number.description
            text.withUTF8 { utf8 in
                if let base = utf8.baseAddress { append(base, utf8.count) }
            }
        case .string(let text): string(text)
        case .array(let elements):
            byte(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { byte(UInt8(ascii: ",")) }
                self.value(element)
            }
            byte(UInt8(ascii: "]"))
        case .object(let fields):
            byte(UInt8(ascii: "{"))
            for (offset, key) in fields.keys.sorted().enumerated() {
                if offset > 0 { byte(UInt8(ascii: ",")) }
                string(key)
                byte(UInt8(ascii: ":"))
                self.value(fields[key]!)
            }
            byte(UInt8(ascii: "}"))
        }
    }
}
