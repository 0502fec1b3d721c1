import CCurl
import Foundation
import SystemSupport

/// Which members of the cluster stopped answering, shared by every connection of one process
/// (its ``EtcdClient``s and ``EtcdWatcher``s): a member that timed out on one connection is
/// avoided by the others too, instead of each of them waiting out a timeout of its own on it
/// (a SIGSTOPped or hung member still accepts TCP connections, so connecting proves nothing).
///
/// A member stays avoided until it answers a recheck (``EtcdClient/recheckAvoided(_:timeout:)``,
/// at most every ``recheckAfter`` per member) or a call that had no other member left to go to.
public final class EtcdMemberHealth: Sendable {
    /// One member that stopped answering.
    private struct Silence {
        /// Timeouts and failed connections since it last answered.
        var failures: Int
        /// When it was first found silent.
        var since: ContinuousClock.Instant
        /// When it was last tried (the last failure or recheck).
        var lastTried: ContinuousClock.Instant
    }

    /// How long an avoided member is left alone before it is offered for a recheck.
    public let recheckAfter: Duration
    private let silent = Locked<[String: Silence]>([:])

    /// A record in which no member is avoided yet.
    public init(recheckAfter: Duration = .seconds(1)) {
        self.recheckAfter = recheckAfter
    }

    /// `endpoint` gave no answer in time (or could not be connected to): avoid it.
    public func recordSilence(_ endpoint: String, at now: ContinuousClock.Instant = .now) {
        silent.withLock { members in
            var silence = members[endpoint] ?? Silence(failures: 0, since: now, lastTried: now)
            silence.failures += 1
            silence.lastTried = now
            members[endpoint] = silence
        }
    }

    /// `endpoint` answered (any answer, an error included: the member runs).
    public func recordAnswer(_ endpoint: String) {
        silent.withLock { members in
            if !members.isEmpty { members[endpoint] = nil }
        }
    }

    /// What one transfer to `endpoint` shows: an HTTP answer of any status, or silence (no
    /// answer in time, no connection). A refused certificate says nothing of the member.
    func record(_ outcome: CurlTransfer.Outcome, of endpoint: String) {
        if outcome.result == CURLE_OK {
            recordAnswer(endpoint)
        } else if EtcdClassification.transport(outcome, .read) != .rejected {
            recordSilence(endpoint)
        }
    }

    /// Whether `endpoint` is avoided now.
    public func isAvoided(_ endpoint: String) -> Bool {
        silent.withLock { $0[endpoint] != nil }
    }

    /// Each avoided endpoint and since when it gave no answer, oldest first.
    public var avoided: [(endpoint: String, since: ContinuousClock.Instant)] {
        silent.withLock { members in
            members.map { ($0.key, $0.value.since) }.sorted { $0.since < $1.since }
        }
    }

    /// The avoided ones of `endpoints` not tried for ``recheckAfter``, marked as tried now, so a
    /// hung member costs one recheck's timeout per ``recheckAfter`` at most.
    func dueForRecheck(among endpoints: [String], now: ContinuousClock.Instant = .now) -> [String] {
        silent.withLock { members in
            endpoints.filter { endpoint in
                guard var silence = members[endpoint], now - silence.lastTried >= recheckAfter else {
                    return false
                }
                silence.lastTried = now
                members[endpoint] = silence
                return true
            }
        }
    }

    /// The index of the endpoint a call should go to first: `start` unless it is avoided, else
    /// the next one in turn that is not; when every one is, the one with the fewest failures
    /// (a member that hangs keeps failing its rechecks; the others, caught in an election, not).
    func choice(among endpoints: [String], from start: Int) -> Int {
        guard !endpoints.isEmpty else { return 0 }
        return silent.withLock { members in
            if members.isEmpty { return start }
            let order = (0..<endpoints.count).map { (start + $0) % endpoints.count }
            if let free = order.first(where: { members[endpoints[$0]] == nil }) { return free }
            let failures = order.map { members[endpoints[$0]]?.failures ?? 0 }
            return zip(order, failures).min { $0.1 < $1.1 }?.0 ?? start
        }
    }

    /// The index after `index` a call that failed there moves to: the next one in turn that is
    /// not avoided, or simply the next when every other one is.
    func next(among endpoints: [String], after index: Int) -> Int {
        guard endpoints.count > 1 else { return 0 }
        return silent.withLock { members in
            let order = (1..<endpoints.count).map { (index + $0) % endpoints.count }
            return order.first { members[endpoints[$0]] == nil } ?? order[0]
        }
    }
}
