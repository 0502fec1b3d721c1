/// Protocol Buffers' wire format, read field by field from a message's bytes, every length
/// checked against what is left: an answer cut short or made up throws, it never reads past its
/// end. Fields a reader does not know are skipped, as proto3 asks.
struct ProtobufReader {
    /// One field's value as the wire carries it; the schema says what it means.
    enum Value {
        case varint(UInt64)
        case lengthDelimited(ArraySlice<UInt8>)
        case fixed64(UInt64)
        case fixed32(UInt32)

        /// The value as an `int64` (or an enum's number), if it is a varint.
        func int64(_ name: String) throws(EtcdWire.Malformed) -> Int64 {
            guard case .varint(let raw) = self else { throw EtcdWire.Malformed("\(name) is not a varint") }
            return Int64(bitPattern: raw)
        }

        func bool(_ name: String) throws(EtcdWire.Malformed) -> Bool {
            try int64(name) != 0
        }

        /// The value's bytes, if it is length-delimited (bytes, a string, a nested message).
        func bytes(_ name: String) throws(EtcdWire.Malformed) -> ArraySlice<UInt8> {
            guard case .lengthDelimited(let bytes) = self else {
                throw EtcdWire.Malformed("\(name) is not length-delimited")
            }
            return bytes
        }
    }

    private let bytes: ArraySlice<UInt8>
    private var offset: Int

    /// A reader of the message `bytes`.
    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        offset = bytes.startIndex
    }

    /// The next field's number and value, nil at the end of the message.
    mutating func next() throws(EtcdWire.Malformed) -> (field: Int, value: Value)? {
        guard offset < bytes.endIndex else { return nil }
        let tag = try varint()
        let field = tag >> 3
        guard field > 0, field <= 0x1FFF_FFFF else { throw EtcdWire.Malformed("a field number of \(field)") }
        switch tag & 7 {
        case 0:
            return (Int(field), .varint(try varint()))
        case 1:
            return (Int(field), .fixed64(try fixed(8)))
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - offset) else {
                throw EtcdWire.Malformed(
                    "field \(field) claims \(length) bytes, \(bytes.endIndex - offset) are left")
            }
            let start = offset
            offset += Int(length)
            return (Int(field), .lengthDelimited(bytes[start..<offset]))
        case 5:
            return (Int(field), .fixed32(UInt32(truncatingIfNeeded: try fixed(4))))
        case let type:
            // 3 and 4 are proto2's groups, which etcd never sends; 6 and 7 are not defined.
            throw EtcdWire.Malformed("field \(field) has wire type \(type)")
        }
    }

    private mutating func varint() throws(EtcdWire.Malformed) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.endIndex {
            let byte = bytes[offset]
            offset += 1
            // The tenth byte carries the top bit only.
            guard shift < 63 || byte <= 1 else { throw EtcdWire.Malformed("a varint longer than 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        throw EtcdWire.Malformed("a varint cut short")
    }

    /// A little-endian number of `width` bytes.
    private mutating func fixed(_ width: Int) throws(EtcdWire.Malformed) -> UInt64 {
        guard bytes.endIndex - offset >= width else {
            throw EtcdWire.Malformed("a fixed-width field cut short")
        }
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += width
        return value
    }
}
