import Foundation
import Synchronization
import ZeroMQ

/// Bytes of replies each command peer has not taken yet: counted when a reply is handed to
/// libzmq and given back when libzmq lets it go (written to the connection, or dropped). The
/// ROUTER's own bound counts replies, and one `list` of the longest list is 16 MB; this counts
/// bytes, so a peer that pipelines requests and reads nothing is refused once it holds
/// ``ServiceConfiguration/maximumUnreadReplyBytes`` (docs/RELIABILITY.md, "Bounds per peer").
///
/// The table of peers is the loop's alone; libzmq's I/O threads give bytes back through the
/// ``PeerBytes`` a reply was counted on, without a lock or a look-up (a lock and a hashed
/// look-up per reply on each side cost about 1,300 instructions a toggle).
final class UnreadReplies {
    /// One peer's bytes in flight, shared with the release of each of its replies.
    final class PeerBytes: ReleaseObserver {
        fileprivate let bytes = Atomic<Int>(0)
        fileprivate let total: Total

        fileprivate init(total: Total) { self.total = total }

        /// Gives back `count` bytes libzmq let go (from any thread).
        func released(_ count: Int) {
            bytes.subtract(count, ordering: .releasing)
            total.bytes.subtract(count, ordering: .releasing)
        }
    }

    /// Every peer's bytes together.
    fileprivate final class Total: Sendable {
        let bytes = Atomic<Int>(0)
    }

    private let total = Total()
    private var table: [Data: PeerBytes] = [:]
    /// The table's size after its last sweep of peers with nothing in flight.
    private var sweptCount = 0
    /// The peer counted last and its entry in the table: the next reply most often goes to the
    /// same peer, and hashing its routing id cost about 500 instructions a reply
    /// (docs/BENCHMARKS.md, "Stop 58"). Forgotten when a sweep may have removed it.
    private var last: (peer: Data, bytes: PeerBytes)?

    /// The peer a reply goes to: its routing id, the envelope's first frame.
    static func peer(of envelope: [Data]) -> Data { envelope.first ?? Data() }

    /// Bytes handed to libzmq for `peer` and not let go yet.
    func unread(by peer: Data) -> Int { table[peer]?.bytes.load(ordering: .acquiring) ?? 0 }

    /// Bytes `peer` has not taken when all peers' together reach `limit`, else 0 (then it holds
    /// less than `limit`). A release not seen yet only makes it look up the peer.
    func unread(by peer: Data, ifAllReach limit: Int) -> Int {
        total.bytes.load(ordering: .acquiring) < limit ? 0 : unread(by: peer)
    }

    /// Whether a request of `peer`, whose reply is likely `likely`, is answered within `bounds`
    /// by what the peers hold now (``ReplyAdmission``): the handler's check of every request and
    /// a replica's before it forwards one.
    func admission(
        of peer: Data, likely: () -> IncomingRequest.LikelyReply, within bounds: ReplyAdmission.Bounds
    ) -> ReplyAdmission {
        ReplyAdmission.decide(
            totalUnread: total.bytes.load(ordering: .acquiring), peerUnread: { unread(by: peer) },
            likely: likely, bounds: bounds)
    }

    /// Counts `count` bytes handed to libzmq for `peer`; they are given back through the
    /// result's ``PeerBytes/release(_:)``.
    @discardableResult
    func add(_ count: Int, for peer: Data) -> PeerBytes {
        let counter: PeerBytes
        if let last, last.peer == peer {
            counter = last.bytes
        } else if let known = table[peer] {
            counter = known
        } else {
            sweepIfGrown()
            counter = PeerBytes(total: total)
            table[peer] = counter
        }
        last = (peer, counter)
        counter.bytes.add(count, ordering: .releasing)
        total.bytes.add(count, ordering: .releasing)
        return counter
    }

    /// Every peer's bytes together.
    var totalBytes: Int { total.bytes.load(ordering: .acquiring) }

    /// Peers with replies in flight.
    var peers: Int { table.values.reduce(0) { $0 + ($1.bytes.load(ordering: .acquiring) > 0 ? 1 : 0) } }

    /// Forgets the peers with nothing in flight once the table has doubled since the last
    /// sweep, so it holds about the peers with replies in flight and a sweep costs O(1) a peer.
    /// A peer at 0 has no release to come: only this thread adds.
    private func sweepIfGrown() {
        guard table.count >= 2 * sweptCount + 64 else { return }
        table = table.filter { $0.value.bytes.load(ordering: .acquiring) > 0 }
        last = nil
        sweptCount = table.count
    }
}

@available(*, unavailable) extension UnreadReplies: Sendable {}
