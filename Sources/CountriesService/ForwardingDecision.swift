import CountriesCore
import CountriesReplication
import Foundation

/// Whether a request is handled by this replica or forwarded to the elected writer (docs/HA.md,
/// "Commits"). Plain values, so the rule is tested without sockets:
///
/// - a change goes to the writer when another replica is the writer and the client may change
///   the list (a read-only client's change is refused here: the writer would see this replica's
///   key, not the client's);
/// - any request of a peer that still has forwarded requests pending goes too, so its replies
///   keep the order of its requests (a pipelining client reads its own change);
/// - a request ``ReplyAdmission`` would not answer (its peer holds its bound of unread replies,
///   or all peers hold theirs) is not forwarded: it is refused or dropped here, as every
///   replica does;
/// - a request another replica forwarded here stays here (never passed on again);
/// - a `reset` stays here: its reply carries the whole list (up to 16 MB), which the writer
///   would build for each retry once building it outlasted the forwarder's reply timeout, and
///   a reset is rare enough that committing it here (the compare keeps it safe) costs nothing;
/// - everything else (reads, `status`, malformed requests, or no writer known) stays here.
enum ForwardingDecision: Equatable {
    /// Handle the request here (commit it, if it is a change, as before the election).
    case handleHere
    /// Send it to the writer at this command endpoint.
    case forward(to: String)

    /// The decision for `request` when this replica's role is `role`.
    static func decide(
        _ request: IncomingRequest, role: WriterElection.Role, peerHasPending: Bool, admitted: Bool
    ) -> ForwardingDecision {
        guard case .follower(let endpoint) = role, admitted,
            !ChangeForwarder.isForwarded(request.envelope)
        else {
            return .handleHere
        }
        if peerHasPending { return .forward(to: endpoint) }
        guard request.access == .readWrite, isChange(request.body) else { return .handleHere }
        return .forward(to: endpoint)
    }

    /// Whether `body` is one frame holding a valid change other than `reset` (anything else is
    /// answered here).
    static func isChange(_ body: [[UInt8]]) -> Bool {
        guard body.count == 1, let frame = body.first, let request = try? Request.decode(frame) else {
            return false
        }
        if case .change(let change) = request.command, change != .reset { return true }
        return false
    }
}
