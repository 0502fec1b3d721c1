/// Cuts the body of a gRPC stream (a watch's answers) into its messages, as the bytes arrive in
/// chunks of any size: each message is the 5-byte prefix of ``GRPCFraming`` (a compression flag,
/// then the length in four bytes, big-endian) and that many bytes. Each message it returns is
/// then read by ``EtcdProtobufWire``, which checks the rest.
struct GRPCMessageSplitter {
    /// Why the stream cannot be cut into messages.
    enum Failure: Error, Equatable {
        /// A message marked compressed: the client asks for none, so none may come.
        case compressed
        /// One message claims more bytes than the limit.
        case tooLarge(Int)
    }

    /// The longest message accepted, in bytes, so a stream that claims a huge message cannot
    /// take all the memory waiting for it.
    let maximumMessageBytes: Int
    private var pending: [UInt8] = []

    /// A splitter that refuses messages longer than `maximumMessageBytes`.
    init(maximumMessageBytes: Int = 64 << 20) {
        self.maximumMessageBytes = maximumMessageBytes
    }

    /// Whether bytes of an unfinished message are waiting for the rest.
    var hasPartialMessage: Bool { !pending.isEmpty }

    /// Adds `bytes` and returns the messages they complete, in order, without their prefixes.
    mutating func append(_ bytes: some Collection<UInt8>) throws(Failure) -> [ArraySlice<UInt8>] {
        pending.append(contentsOf: bytes)
        var messages: [ArraySlice<UInt8>] = []
        var start = 0
        while pending.count - start >= GRPCFraming.prefixBytes {
            let (compressed, length) = GRPCFraming.prefix(at: start, of: pending)
            guard !compressed else { throw .compressed }
            guard length <= maximumMessageBytes else { throw .tooLarge(length) }
            let end = start + GRPCFraming.prefixBytes + length
            guard end <= pending.count else { break }
            messages.append(pending[(start + GRPCFraming.prefixBytes)..<end])
            start = end
        }
        if start > 0 {
            // The messages handed out keep their own copy of the storage they slice.
            pending.removeFirst(start)
        }
        return messages
    }
}
