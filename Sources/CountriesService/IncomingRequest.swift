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
    /// The frames after the envelope; a valid request has exactly one.
    var body: [Data]
    /// What the client may do (read-only clients are refused changes).
    var access: Access = .readWrite
    /// Who sent it and when it was read, when the tally reads traces (else ``RequestTrace/none``).
    var trace = RequestTrace.none

    /// The message property in which the ZAP handler names a client's access ("rw:KEY").
    static let userIDProperty = "User-Id"
    /// The message property in which libzmq names a tcp peer's address.
    static let peerAddressProperty = "Peer-Address"

    init(envelope: [Data], body: [Data], access: Access = .readWrite) {
        self.envelope = envelope
        self.body = body
        self.access = access
    }

    /// A message off the ROUTER: split into envelope and body; when clients are
    /// `authenticated`, the access the ZAP handler wrote in the User-Id ("rw:KEY" or "ro:KEY"),
    /// anything else getting the least.
    init(_ message: ReceivedMessage, authenticated: Bool, received: ContinuousClock.Instant? = nil) {
        self = Self.split(message.frames)
        if let received {
            trace = RequestTrace(received: received)
            trace.peer = message.properties[Self.peerAddressProperty]
        }
        if authenticated {
            access =
                message.properties[Self.userIDProperty]?.hasPrefix("rw:") == true ? .readWrite : .readOnly
        }
    }

    /// Splits a ROUTER message into its envelope (routing id(s) and the empty delimiter a REQ
    /// peer adds) and its body. A DEALER peer sends no delimiter: then the first frame alone is
    /// the envelope.
    static func split(_ frames: [Data]) -> IncomingRequest {
        // A closure, not the key path `\.isEmpty`: that is applied through the runtime's
        // key-path machinery, about 1,400 instructions per request.
        if let delimiter = frames.firstIndex(where: { $0.isEmpty }), delimiter > 0 {
            return IncomingRequest(
                envelope: Array(frames[...delimiter]), body: Array(frames[(delimiter + 1)...]))
        }
        return IncomingRequest(envelope: Array(frames.prefix(1)), body: Array(frames.dropFirst()))
    }

    /// Whether the body may be a `history` request, without decoding it: the op's name is in
    /// it. A false positive (a country called "history") only ends a batch early.
    ///
    /// It runs on every request the loop reads: `memchr` and `memcmp` over the frame's bytes,
    /// not the generic `Data.firstRange(of:)`, which was 6 % of a durable service's CPU samples.
    var mayBeHistory: Bool { mayContain(IncomingRequest.historyNeedle) }

    /// What the reply may take, estimated without decoding the body, for the batch's byte
    /// budget: a page of `history`, a whole list (`list`, `reset`: `listBytes`), or nothing
    /// worth counting; the list's size is asked only for those. A false positive only ends a
    /// batch early.
    func estimatedReplyBytes(listBytes: @autoclosure () -> Int) -> Int {
        estimatedReplyBytes(mayBeHistory: mayBeHistory, listBytes: listBytes())
    }

    /// ``estimatedReplyBytes(listBytes:)`` with ``mayBeHistory`` already asked (the loop asks
    /// it first, to count the batch's costly requests): each scan of the body is made once.
    func estimatedReplyBytes(mayBeHistory: Bool, listBytes: @autoclosure () -> Int) -> Int {
        if mayBeHistory { return Limits.historyPageBytes }
        if mayContain(IncomingRequest.listNeedle) || mayContain(IncomingRequest.resetNeedle) {
            return listBytes()
        }
        return 0
    }

    /// Whether a body frame holds `needle`.
    private func mayContain(_ needle: [UInt8]) -> Bool {
        body.contains { frame in
            frame.withUnsafeBytes { bytes in IncomingRequest.contains(needle, in: bytes) }
        }
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
    private static let listNeedle: [UInt8] = Array("list".utf8)
    private static let resetNeedle: [UInt8] = Array("reset".utf8)
}
