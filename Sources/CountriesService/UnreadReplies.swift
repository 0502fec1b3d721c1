import Foundation
import Synchronization
import SystemSupport

/// Bytes of replies each command peer has not taken yet: counted when a reply is handed to
/// libzmq and given back when libzmq lets it go (written to the connection, or dropped). The
/// ROUTER's own bound counts replies, and one `list` of the longest list is 16 MB; this counts
/// bytes, so a peer that pipelines requests and reads nothing is refused once it holds
/// ``ServiceConfiguration/maximumUnreadReplyBytes`` (docs/RELIABILITY.md, "Bounds per peer").
///
/// Shared with libzmq's I/O threads, which give bytes back.
final class UnreadReplies: Sendable {
    private let bytes = Locked<[Data: Int]>([:])
    /// Every peer's bytes together: below a bound, no peer can reach it, and the loop's check
    /// of each request needs neither the lock nor the table.
    private let total = Atomic<Int>(0)

    /// The peer a reply goes to: its routing id, the envelope's first frame.
    static func peer(of envelope: [Data]) -> Data { envelope.first ?? Data() }

    /// Bytes handed to libzmq for `peer` and not let go yet.
    func unread(by peer: Data) -> Int { bytes.withLock { $0[peer] ?? 0 } }

    /// Bytes `peer` has not taken when all peers' together reach `limit`, else 0 (then it holds
    /// less than `limit`). Called by the thread that ``add(_:for:)``s, so the total it reads is
    /// never below what it added; a release not seen yet only makes it look up the peer.
    func unread(by peer: Data, ifAllReach limit: Int) -> Int {
        total.load(ordering: .acquiring) < limit ? 0 : unread(by: peer)
    }

    /// Counts `count` bytes handed to libzmq for `peer`.
    func add(_ count: Int, for peer: Data) {
        bytes.withLock { $0[peer, default: 0] += count }
        total.add(count, ordering: .releasing)
    }

    /// Gives back `count` bytes libzmq let go; a peer with none left is forgotten, so the
    /// table holds only peers with replies in flight.
    func release(_ count: Int, for peer: Data) {
        bytes.withLock { table in
            // One look-up, not a read and a write: this runs on libzmq's I/O thread per reply.
            guard let index = table.index(forKey: peer) else { return }
            let left = table.values[index] - count
            if left > 0 {
                table.values[index] = left
            } else {
                table.remove(at: index)
            }
        }
        total.subtract(count, ordering: .releasing)
    }

    /// Every peer's bytes together.
    var totalBytes: Int { total.load(ordering: .acquiring) }

    /// Peers with replies in flight.
    var peers: Int { bytes.withLock { $0.count } }
}
