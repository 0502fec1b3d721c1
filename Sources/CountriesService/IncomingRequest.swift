import Foundation
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

    /// The message property in which the ZAP handler names a client's access ("rw:KEY").
    static let userIDProperty = "User-Id"

    init(envelope: [Data], body: [Data], access: Access = .readWrite) {
        self.envelope = envelope
        self.body = body
        self.access = access
    }

    /// A message off the ROUTER: split into envelope and body; when clients are
    /// `authenticated`, the access the ZAP handler wrote in the User-Id ("rw:KEY" or "ro:KEY"),
    /// anything else getting the least.
    init(_ message: ReceivedMessage, authenticated: Bool) {
        self = Self.split(message.frames)
        if authenticated {
            access =
                message.properties[Self.userIDProperty]?.hasPrefix("rw:") == true ? .readWrite : .readOnly
        }
    }

    /// Splits a ROUTER message into its envelope (routing id(s) and the empty delimiter a REQ
    /// peer adds) and its body. A DEALER peer sends no delimiter: then the first frame alone is
    /// the envelope.
    static func split(_ frames: [Data]) -> IncomingRequest {
        if let delimiter = frames.firstIndex(where: \.isEmpty), delimiter > 0 {
            return IncomingRequest(
                envelope: Array(frames[...delimiter]), body: Array(frames[(delimiter + 1)...]))
        }
        return IncomingRequest(envelope: Array(frames.prefix(1)), body: Array(frames.dropFirst()))
    }

    /// Whether the body may be a `history` request, without decoding it: the op's name is in
    /// it. A false positive (a country called "history") only ends a batch early.
    var mayBeHistory: Bool {
        let needle = Array("history".utf8)
        return body.contains { frame in
            frame.count >= needle.count && frame.firstRange(of: needle) != nil
        }
    }
}
