import Foundation

/// Protocol Buffers' wire format, written field by field into one buffer: what etcd's gRPC API
/// takes (https://protobuf.dev/programming-guides/encoding/). Only what the client sends: varints
/// (int64, bool, enums) and length-delimited fields (bytes, strings, nested messages). A field is
/// written when asked, zero or empty included; callers leave out proto3's defaults themselves.
struct ProtobufWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes.
    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// How a field's value is laid out on the wire (the low three bits of its tag).
    enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case fixed32 = 5
    }

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private mutating func tag(_ field: Int, _ type: WireType) {
        varint(UInt64(field) << 3 | type.rawValue)
    }

    /// An `int64` (a negative one takes ten bytes, as proto3 writes it) or an enum's number.
    mutating func int64(_ field: Int, _ value: Int64) {
        tag(field, .varint)
        varint(UInt64(bitPattern: value))
    }

    mutating func bool(_ field: Int, _ value: Bool) {
        tag(field, .varint)
        varint(value ? 1 : 0)
    }

    mutating func bytes(_ field: Int, _ value: UnsafeRawBufferPointer) {
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func bytes(_ field: Int, _ value: Data) {
        value.withUnsafeBytes { bytes(field, $0) }
    }

    /// A string's UTF-8 (etcd's keys are `bytes`; they are the same on the wire).
    mutating func string(_ field: Int, _ value: String) {
        var text = value
        text.withUTF8 { bytes(field, UnsafeRawBufferPointer($0)) }
    }

    /// A nested message, written by `body` into a writer of its own and then copied behind its
    /// length (which comes first on the wire and is known only once it is written).
    mutating func message(_ field: Int, capacity: Int = 64, _ body: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter(capacity: capacity)
        body(&inner)
        tag(field, .lengthDelimited)
        varint(UInt64(inner.bytes.count))
        bytes.append(contentsOf: inner.bytes)
    }
}
