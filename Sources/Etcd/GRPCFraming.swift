/// gRPC over HTTP/2's framing of one unary call
/// (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md): a message is a byte that
/// says whether it is compressed, its length in four bytes (big-endian), then the message. The
/// call's outcome is the `grpc-status` trailer, with `grpc-message` percent-encoded.
enum GRPCFraming {
    /// The prefix's length.
    static let prefixBytes = 5

    /// `message` behind its prefix, uncompressed.
    static func framed(_ message: [UInt8]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(prefixBytes + message.count)
        body.append(0)
        let length = UInt32(message.count)
        for shift in stride(from: 24, through: 0, by: -8) {
            body.append(UInt8(truncatingIfNeeded: length >> shift))
        }
        body.append(contentsOf: message)
        return body
    }

    /// What the prefix at `start` of `bytes` says: whether the message is compressed, and its
    /// length. `bytes` must hold the whole prefix from `start`.
    static func prefix(at start: Int, of bytes: [UInt8]) -> (compressed: Bool, length: Int) {
        (bytes[start] != 0, bytes[(start + 1)..<(start + prefixBytes)].reduce(0) { $0 << 8 | Int($1) })
    }

    /// The one message of a unary call's answer `body`: it must be the whole body, uncompressed
    /// (the client asks for no compression).
    static func message(in body: [UInt8]) throws(EtcdWire.Malformed) -> ArraySlice<UInt8> {
        guard body.count >= prefixBytes else {
            throw EtcdWire.Malformed("a gRPC answer of \(body.count) bytes, shorter than a message's prefix")
        }
        let (compressed, length) = prefix(at: 0, of: body)
        guard !compressed else {
            throw EtcdWire.Malformed("a compressed gRPC message, which was not asked for")
        }
        guard length == body.count - prefixBytes else {
            throw EtcdWire.Malformed(
                "a gRPC message of \(length) bytes in an answer of \(body.count - prefixBytes) bytes after its prefix"
            )
        }
        return body[prefixBytes...]
    }

    /// A call's outcome as one header line says it (`grpc-status` or `grpc-message`).
    enum StatusLine: Equatable {
        /// `grpc-status`: the code, or -1 when the value is not a number.
        case status(Int64)
        /// `grpc-message`, percent-decoded.
        case message(String)
    }

    /// The outcome in one header line as libcurl hands it over (`name: value`, then CRLF), a
    /// header or a trailer alike: names in any case, the value without the spaces, tabs and line
    /// ends around it; nil for any other line. Read on the bytes, and other lines are refused
    /// by their first byte: libcurl calls this for every line of every answer, and a line made
    /// into a `String` and trimmed by Foundation took a fifteenth of a replica's main thread at
    /// one client (docs/BENCHMARKS.md, "Stop 46").
    static func statusLine(_ line: UnsafeRawBufferPointer) -> StatusLine? {
        guard line.count > statusName.count, line[0] | 0x20 == UInt8(ascii: "g"),
            let colon = line.firstIndex(of: UInt8(ascii: ":"))
        else { return nil }
        func named(_ name: [UInt8]) -> Bool {
            colon == name.count
                && name.indices.allSatisfy { index in
                    let byte = line[index]
                    let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                    return lowered == name[index]
                }
        }
        let isStatus = named(statusName)
        guard isStatus || named(messageName) else { return nil }
        var start = colon + 1
        var end = line.count
        while start < end, blanks.contains(line[start]) { start += 1 }
        while end > start, blanks.contains(line[end - 1]) { end -= 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[start..<end])
        let text = String(decoding: value, as: UTF8.self)
        return isStatus ? .status(Int64(text) ?? -1) : .message(percentDecoded(text))
    }

    private static let statusName = Array("grpc-status".utf8)
    private static let messageName = Array("grpc-message".utf8)
    private static let blanks: [UInt8] = [
        UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"),
    ]

    /// `grpc-message`'s text: `%XX` escapes are the bytes of UTF-8; anything not well formed is
    /// kept as it came.
    static func percentDecoded(_ text: String) -> String {
        // On the bytes: `contains` with a string argument is Foundation's, through NSString.
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        let source = Array(text.utf8)
        var index = 0
        while index < source.count {
            if source[index] == UInt8(ascii: "%"), index + 2 < source.count,
                let high = hexValue(source[index + 1]), let low = hexValue(source[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
