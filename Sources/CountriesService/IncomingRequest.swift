import CountriesCore
import CountriesSockets
import Foundation
@preconcurrency import Glibc
import ZeroMQ

/// One request as it came off the wire: the return address to reply to, its body frames, and
/// what its sender may do.
struct IncomingRequest {
    /// The routing frames (and empty delimiter) to put in front of the reply; opaque here.
    var envelope: [Data]
    /// The frames after the envelope; a valid request has exactly one. Arrays, read once by the
    /// parser: a `Data` of a body's size was two allocations (docs/BENCHMARKS.md, "Stop 58").
    var body: [[UInt8]]
    /// What the client may do (read-only clients are refused changes).
    var access: Access = .readWrite
    /// Who sent it and when it was read, when the tally reads traces (else ``RequestTrace/none``).
    var trace = RequestTrace.none

    /// The bytes of all its frames, envelope included: what holding it costs.
    var bytes: Int {
        envelope.reduce(0) { $0 + $1.count } + body.reduce(0) { $0 + $1.count }
    }

    /// The message property in which the ZAP handler names a client's access ("rw:KEY").
    static let userIDProperty = "User-Id"
    /// The message property in which libzmq names a tcp peer's address.
    static let peerAddressProperty = "Peer-Address"

    init(envelope: [Data], body: [[UInt8]], access: Access = .readWrite) {
        self.envelope = envelope
        self.body = body
        self.access = access
    }

    /// A message off the ROUTER, its frames given to an ``Assembler``; when clients are
    /// `authenticated`, the access the ZAP handler wrote in the User-Id ("rw:KEY" or "ro:KEY"),
    /// anything else getting the least.
    init(
        _ frames: consuming Assembler, properties: [String: String], authenticated: Bool,
        received: ContinuousClock.Instant? = nil
    ) {
        self = frames.request()
        if let received {
            trace = RequestTrace(received: received)
            trace.peer = properties[Self.peerAddressProperty]
        }
        if authenticated {
            access =
                properties[Self.userIDProperty]?.hasPrefix("rw:") == true ? .readWrite : .readOnly
        }
    }

    /// Splits a ROUTER message, frame by frame as it is received, into its envelope (routing
    /// id(s) and the empty delimiter a REQ peer adds) and its body. A DEALER peer sends no
    /// delimiter: then the first frame alone is the envelope.
    ///
    /// The envelope's frames are kept as `Data`, which holds a routing id (5 bytes from libzmq)
    /// and the delimiter without an allocation; the body's as arrays, one allocation each.
    struct Assembler {
        private var envelope: [Data] = []
        private var body: [[UInt8]] = []
        /// Whether the first empty frame came after the first frame: the frames after it are
        /// the body.
        private var delimited = false
        private var sawEmpty = false

        /// An assembler of no frames yet.
        init() {}

        /// Takes the next frame; `more` says whether others follow.
        mutating func take(_ bytes: UnsafeRawBufferPointer, more: Bool) {
            if delimited {
                body.append(Array(bytes))
                return
            }
            if envelope.isEmpty { envelope.reserveCapacity(more ? 2 : 1) }
            envelope.append(bytes.isEmpty ? Data() : Data(bytes))
            if bytes.isEmpty {
                delimited = !sawEmpty && envelope.count > 1
                sawEmpty = true
            }
        }

        /// The request of the frames taken.
        consuming func request() -> IncomingRequest {
            guard !delimited, envelope.count > 1 else {
                return IncomingRequest(envelope: envelope, body: body)
            }
            // No delimiter: the first frame is the envelope, the rest the body.
            let rest = envelope[1...].map { [UInt8]($0) }
            envelope.removeSubrange(1...)
            return IncomingRequest(envelope: envelope, body: rest)
        }
    }

    /// What a request's reply may take, guessed from its body's bytes before it is decoded.
    enum LikelyReply: Equatable {
        /// The body names `history`: a page of events.
        case historyPage
        /// The body names `list` or `reset`: the whole list.
        case wholeList
        /// The body has a `\u` escape, so its op may be any (`"l\u0069st"` is `list`, and was
        /// taken for a small reply past the unread replies' bound): counted as the costliest
        /// of each, a page of history and the whole list.
        case anyOp
        /// Anything else: nothing worth counting.
        case small
    }

    /// What the reply may take, without decoding the body: the op's name is in it. A false
    /// positive (a country called "history") only ends a batch early.
    ///
    /// It runs on every request the loop reads: one pass of `memchr` and `memcmp` over each
    /// frame's bytes, not the generic `Data.firstRange(of:)`, which was 6 % of a durable
    /// service's CPU samples, nor one pass per word (docs/BENCHMARKS.md, "Stop 48").
    var likelyReply: LikelyReply {
        var likely = LikelyReply.small
        for frame in body {
            let found = frame.withUnsafeBytes { bytes -> LikelyReply in
                if IncomingRequest.contains(IncomingRequest.escapeNeedle, in: bytes) { return .anyOp }
                if IncomingRequest.contains(IncomingRequest.historyNeedle, in: bytes) { return .historyPage }
                if IncomingRequest.contains(IncomingRequest.listNeedle, in: bytes)
                    || IncomingRequest.contains(IncomingRequest.resetNeedle, in: bytes)
                {
                    return .wholeList
                }
                return .small
            }
            if found == .anyOp || found == .historyPage { return found }
            if found == .wholeList { likely = found }
        }
        return likely
    }

    /// Whether `bytes` hold `needle` (glibc's `memmem` is a GNU extension Swift does not import).
    private static func contains(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress, bytes.count >= needle.count else { return false }
        return needle.withUnsafeBytes { buffer in
            guard let word = buffer.baseAddress else { return false }
            var offset = 0
            // Candidates: each first letter early enough for the whole word to fit.
            while let hit = memchr(start + offset, Int32(needle[0]), bytes.count - needle.count + 1 - offset)
            {
                if memcmp(hit, word, needle.count) == 0 { return true }
                offset = start.distance(to: UnsafeRawPointer(hit)) + 1
                if offset > bytes.count - needle.count { return false }
            }
            return false
        }
    }

    private static let historyNeedle: [UInt8] = Array("history".utf8)
    private static let escapeNeedle: [UInt8] = Array(#"\u"#.utf8)
    private static let listNeedle: [UInt8] = Array("list".utf8)
    private static let resetNeedle: [UInt8] = Array("reset".utf8)
}

extension IncomingRequest.LikelyReply {
    /// The bytes to count for the batch's byte budget: a page of `history`, the whole list
    /// (`list`, `reset`: `listBytes`, asked only then), or nothing worth counting.
    func estimatedBytes(listBytes: @autoclosure () -> Int) -> Int {
        switch self {
        case .historyPage: Limits.historyPageBytes
        case .wholeList: listBytes()
        case .anyOp: max(Limits.historyPageBytes, listBytes())
        case .small: 0
        }
    }
}
