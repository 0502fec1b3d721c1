import SystemSupport

/// How many connections each client (``ClientAddressGroup``) holds, for the per-address bound:
/// a new connection is refused while its client holds `limit` (0: no limit).
///
/// Asked before the library accepts a connection (``admits(_:)``), counted once it is open
/// (``opened(_:from:)``) and until it closes (``closed(_:)``), so a connection the library
/// refuses for another reason is never counted. Connections accepted by several server threads
/// at the same instant are checked before either is counted: a client may hold one more per
/// server thread, never more.
final class ConnectionsPerClient: Sendable {
    private struct State {
        var counts: [ClientAddressGroup: Int] = [:]
        var groups: [UInt: ClientAddressGroup] = [:]
    }

    /// Most connections of one client (0: no limit).
    let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether a new connection from `group` may be accepted.
    func admits(_ group: ClientAddressGroup) -> Bool {
        guard limit > 0 else { return true }
        return state.withLock { $0.counts[group, default: 0] < limit }
    }

    /// The connection with key `connection` is open, from `group`.
    func opened(_ connection: UInt, from group: ClientAddressGroup) {
        state.withLock { state in
            state.groups[connection] = group
            state.counts[group, default: 0] += 1
        }
    }

    /// The connection with key `connection` closed; one not counted is ignored.
    func closed(_ connection: UInt) {
        state.withLock { state in
            guard let group = state.groups.removeValue(forKey: connection) else { return }
            let left = state.counts[group, default: 1] - 1
            state.counts[group] = left > 0 ? left : nil
        }
    }

    /// The connections `group` holds now.
    func count(of group: ClientAddressGroup) -> Int {
        state.withLock { $0.counts[group, default: 0] }
    }
}
