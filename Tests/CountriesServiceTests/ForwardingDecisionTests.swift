import CountriesCore
import Foundation
import Testing

@testable import CountriesReplication
@testable import CountriesService
@testable import CountriesSockets

/// Which requests a replica sends to the elected writer: changes of clients that may change,
/// and whatever a peer sends while it waits for forwarded replies; nothing else.
@Suite struct ForwardingDecisionTests {
    private let writer = "tcp://10.0.0.2:5555"

    private func request(_ json: String, access: Access = .readWrite, envelope: [Data]? = nil)
        -> IncomingRequest
    {
        IncomingRequest(
            envelope: envelope ?? [Data("peer".utf8), Data()], body: [Array(json.utf8)], access: access)
    }

    private func decide(
        _ request: IncomingRequest, role: WriterElection.Role? = nil, pending: Bool = false, unread: Int = 0
    ) -> ForwardingDecision {
        let bounds = ReplyAdmission.Bounds(perPeer: 1_000, inAll: 10_000, ofAReader: 100)
        return ForwardingDecision.decide(
            request, role: role ?? .follower(endpoint: writer), peerHasPending: pending,
            admitted: ReplyAdmission.decide(
                totalUnread: unread, peerUnread: { unread }, likely: { request.likelyReply }, bounds: bounds)
                == .answer)
    }

    @Test func aFollowerForwardsChangesAndAnswersReadsItself() {
        let toggle = request(#"{"op":"toggle","name":"France","id":"r-1"}"#)
        #expect(decide(toggle) == .forward(to: writer))
        #expect(decide(request(#"{"op":"list"}"#)) == .handleHere)
        #expect(decide(request(#"{"op":"status"}"#)) == .handleHere)
        #expect(decide(request("not json")) == .handleHere, "refused here, as anywhere")
    }

    /// A reset's reply is the whole list: built once here, not on the writer for every retry.
    @Test func aResetIsCommittedHere() {
        #expect(decide(request(#"{"op":"reset","id":"r-2"}"#)) == .handleHere)
        #expect(decide(request(#"{"op":"add","name":"Atlantis","id":"r-3"}"#)) == .forward(to: writer))
    }

    @Test func theWriterOrNoWriterCommitsItself() {
        let toggle = request(#"{"op":"toggle","name":"France"}"#)
        #expect(decide(toggle, role: .writer) == .handleHere)
        #expect(decide(toggle, role: .unknown) == .handleHere)
    }

    @Test func aReadOnlyClientsChangeIsRefusedHereNotForwarded() {
        // The writer would see this replica's key, which may change the list.
        #expect(decide(request(#"{"op":"toggle","name":"France"}"#, access: .readOnly)) == .handleHere)
    }

    @Test func aPeerWaitingForForwardedRepliesKeepsItsOrder() {
        #expect(decide(request(#"{"op":"list"}"#), pending: true) == .forward(to: writer))
    }

    @Test func aPeerAtItsBoundOfUnreadRepliesIsRefusedHere() {
        #expect(decide(request(#"{"op":"toggle","name":"France"}"#), unread: 1_000) == .handleHere)
    }

    /// While all peers hold their bound, a peer that reads nothing is answered nowhere: the
    /// writer would hold its reply here just the same.
    @Test func aRequestThatWouldBeDroppedHereIsNotForwarded() {
        let toggle = request(#"{"op":"toggle","name":"France"}"#)
        let bounds = ReplyAdmission.Bounds(perPeer: 1_000, inAll: 10_000, ofAReader: 100)
        let holding = ReplyAdmission.decide(
            totalUnread: 10_000, peerUnread: { 101 }, likely: { toggle.likelyReply }, bounds: bounds)
        guard case .drop = holding else {
            Issue.record("expected a drop, got \(holding)")
            return
        }
        #expect(
            ForwardingDecision.decide(
                toggle, role: .follower(endpoint: writer), peerHasPending: false, admitted: holding == .answer
            )
                == .handleHere)
        let reading = ReplyAdmission.decide(
            totalUnread: 10_000, peerUnread: { 0 }, likely: { toggle.likelyReply }, bounds: bounds)
        #expect(
            ForwardingDecision.decide(
                toggle, role: .follower(endpoint: writer), peerHasPending: false, admitted: reading == .answer
            )
                == .forward(to: writer))
    }

    @Test func aForwardedRequestIsNeverForwardedAgain() {
        var token = ChangeForwarder.marker
        token.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 1])
        let forwarded = request(
            #"{"op":"toggle","name":"France"}"#, envelope: [Data("dealer".utf8), token, Data()])
        #expect(ChangeForwarder.isForwarded(forwarded.envelope))
        #expect(decide(forwarded) == .handleHere)
    }
}
