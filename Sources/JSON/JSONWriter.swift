import Foundation

/// Writes JSON by hand, byte by byte: the exact bytes `JSONEncoder` writes with
/// `[.sortedKeys, .withoutEscapingSlashes]` (`/` unescaped, control characters as
/// `\b \t \n \f \r` or `\u00xx`), at a fraction of its cost. Callers that write objects member
/// by member give the keys in sorted order themselves; ``value(_:)`` sorts them.
public struct JSONWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    /// The bytes written so far, copied once: `Data(bytes)` took the generic sequence
    /// initializer, about 700 instructions per reply or event.
    public var data: Data { bytes.withUnsafeBufferPointer { Data(buffer: $0) } }

    /// Appends one byte as it is (a bracket, a comma, a colon).
    public mutating func byte(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends text as it is: it must already be JSON (a literal, a quoted key and its colon).
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `true` or `false`.
    public mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }

    /// An unsigned integer in decimal.
    public mutating func unsigned(_ value: UInt64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var count = 0
            var rest = value
            repeat {
                digits[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[(20 - count)...]))
        }
    }

    /// A signed integer in decimal.
    public mutating func integer(_ value: Int) {
        integer(Int64(value))
    }

    /// A signed integer in decimal.
    public mutating func integer(_ value: Int64) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            unsigned(UInt64(value.magnitude))
        } else {
            unsigned(UInt64(value))
        }
    }

    /// A string, quoted, with `"`, `\` and control characters escaped (`/` is not).
    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Runs of bytes that need no escape are appended whole; most strings are one run.
            var start = 0
            var position = 0
            let count = utf8.count
            while position < count {
                let byte = utf8[position]
                if byte >= 0x20 && byte != 0x22 && byte != 0x5C {
                    position += 1
                    continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<position]))
                position += 1
                start = position
                escape(byte)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The escape of one byte that cannot stand in a JSON string as it is.
    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(0x22)
        case 0x5C: bytes.append(0x5C)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            let hex: StaticString = "0123456789abcdef"
            let digits = hex.utf8Start
            bytes.append(contentsOf: [
                UInt8(ascii: "u"), 0x30, 0x30, digits[Int(byte >> 4)], digits[Int(byte & 0xF)],
            ])
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
        case .number(let number): bytes.append(contentsOf: number.description.utf8)
        case .string(let text): string(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let fields):
            bytes.append(UInt8(ascii: "{"))
            for (offset, key) in fields.keys.sorted().enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                string(key)
                bytes.append(UInt8(ascii: ":"))
                self.value(fields[key]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}
