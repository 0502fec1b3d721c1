/// Cuts a byte stream of JSON objects written one after another (the gateway's watch stream:
/// `{"result":...}` objects, newline-separated) into one object each, as the bytes arrive in
/// chunks of any size. It only tracks strings and brace depth; each object it returns is then
/// read by ``JSON/JSONParser``, which checks the rest.
struct JSONStreamSplitter {
    /// Why the stream cannot be cut into objects.
    enum Failure: Error, Equatable {
        /// Something other than whitespace between objects, or a `}` with no `{`.
        case notAnObject
        /// One object is longer than the limit.
        case tooLarge
    }

    /// The longest object accepted, in bytes, so a stream that never closes its object cannot
    /// take all the memory.
    let maximumObjectBytes: Int
    private var pending: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false

    /// A splitter that refuses objects longer than `maximumObjectBytes`.
    init(maximumObjectBytes: Int = 64 << 20) {
        self.maximumObjectBytes = maximumObjectBytes
    }

    /// Whether bytes of an unfinished object are waiting for the rest.
    var hasPartialObject: Bool { !pending.isEmpty }

    /// Adds `bytes` and returns the objects they complete, in order. The bytes are scanned in
    /// place and copied a span at a time: an event tail reads every commit through here, and a
    /// copy a byte cost it more than its scan (docs/BENCHMARKS.md, "Stop 41").
    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [[UInt8]] {
        var objects: [[UInt8]] = []
        var index = 0
        // Where the bytes not yet in `pending` start, when inside an object.
        var spanStart = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if depth == 0 {
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0D: continue  // between objects
                case UInt8(ascii: "{"): spanStart = index - 1
                default: throw .notAnObject
                }
            }
            // The object so far: what earlier chunks left in `pending` and this chunk's span.
            if pending.count + (index - spanStart) > maximumObjectBytes { throw .tooLarge }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        pending.append(contentsOf: bytes[spanStart..<index])
                        objects.append(pending)
                        pending.removeAll(keepingCapacity: true)
                    }
                default: break
                }
            }
        }
        if depth > 0 { pending.append(contentsOf: bytes[spanStart..<index]) }
        return objects
    }

    /// Adds `bytes` and returns the objects they complete, in order.
    mutating func append(_ bytes: [UInt8]) throws(Failure) -> [[UInt8]] {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(Failure) in try append(raw) }
        }
        return try result.get()
    }
}
