import CCurl
import Foundation

/// A watch stream on its own connection (not `Sendable`: one thread at a time).
/// ``watch(_:startRevision:shouldStop:onEvents:)`` blocks the calling thread and hands over each
/// batch of changes as it arrives.
///
/// The stream is etcd's gRPC `Watch` call over HTTP/2, its answers in protobuf: through the
/// gateway, etcd wrote every event again as JSON with its value in base64, and each replica's
/// event tail read every commit that way (docs/BENCHMARKS.md, "Stop 45"). Signing in still goes
/// through the gateway.
///
/// It sends etcd's require-leader metadata (`hasleader: true`), so a member cut off
/// from the leader ends the stream (`noQuorum`) instead of going silent while the others go on.
/// A member that does not even answer the watch's creation in ``answerTimeout`` (a hung process
/// still accepts the connection) is left and recorded in the shared ``EtcdMemberHealth``; a
/// stream that goes silent later is the caller's to notice (it knows what should have come).
public final class EtcdWatcher {
    /// The endpoints, as given (`http://host:port`; a bare `host:port` gets `http://`).
    public let endpoints: [String]
    /// The endpoint the next watch goes to first.
    public var currentEndpoint: String { endpoints.isEmpty ? "" : endpoints[current] }

    /// Which members stopped answering, shared with the process's other connections.
    public let memberHealth: EtcdMemberHealth
    /// How long a member may take to answer a watch's creation before the watch goes elsewhere.
    public let answerTimeout: Duration

    private var current = 0
    private let transfer: CurlTransfer?
    private let authenticator: EtcdAuthenticator?
    /// How often `shouldStop` is asked while the stream is silent.
    static let pollInterval: Int32 = 100

    /// Whether ``memberHealth`` avoids the endpoint the watch is on while another one is not: the
    /// watch should end and start again elsewhere.
    public var isOnAvoidedMember: Bool {
        !endpoints.isEmpty && memberHealth.choice(among: endpoints, from: current) != current
    }

    /// A watcher on the cluster at `endpoints`, with `security`'s TLS files and user; connects
    /// (and signs in) on each watch. It watches through `endpoints[preferred]` while that member
    /// answers and `memberHealth` does not avoid it (replicas that prefer different members spread
    /// their watches, so one hung member does not hold them all).
    public init(
        endpoints: [String], preferred: Int = 0, connectTimeout: Duration = .milliseconds(300),
        answerTimeout: Duration = .milliseconds(500), security: EtcdSecurity = EtcdSecurity(),
        memberHealth: EtcdMemberHealth = EtcdMemberHealth()
    ) {
        self.endpoints = endpoints.map(EtcdClient.normalized)
        current = endpoints.isEmpty ? 0 : preferred % endpoints.count
        self.answerTimeout = answerTimeout
        self.memberHealth = memberHealth
        let transfer = CurlTransfer(
            connectTimeout: connectTimeout, headers: [], security: security, wire: .grpc)
        self.transfer = transfer
        // Signing in is the gateway's; the stream is gRPC's and carries the token.
        let signInTransfer = CurlTransfer(connectTimeout: connectTimeout, headers: [], security: security)
        authenticator = signInTransfer.flatMap { signIn in
            transfer.map { EtcdAuthenticator(user: security.user, transfer: signIn, others: [$0]) }
        }
        signInTimeout = connectTimeout * 4
    }

    private let signInTimeout: Duration

    /// Watches `range` from `startRevision` (0: from now), calling `onEvents` with each batch of
    /// changes, in revision order, and the revision of the store when the batch was sent. Tries
    /// the endpoints in turn until one accepts the stream; after a stream failed, the next watch
    /// starts at the next endpoint.
    ///
    /// Returns normally when `onEvents` returned false or `shouldStop()` true (asked at least every
    /// 100 ms, also while nothing arrives). Throws when the stream failed: `compacted` (with
    /// `compactRevision`) when `startRevision` is gone, `noQuorum` when the member lost its
    /// leader, `unreachable` when no endpoint could be reached, `outcomeUnknown` when the stream
    /// broke or ended without a reason; watch again from the revision after the last one seen.
    public func watch(
        _ range: EtcdRangeRequest, startRevision: Int64, shouldStop: () -> Bool,
        onEvents: ([EtcdWatchEvent], _ revision: Int64) -> Bool
    ) throws(EtcdError) {
        guard !endpoints.isEmpty else {
            throw EtcdError(.rejected, "no etcd endpoint was given", endpoint: "")
        }
        guard let transfer, let authenticator else {
            throw EtcdError(.unreachable, "libcurl could not make a handle", endpoint: currentEndpoint)
        }
        let body = GRPCFraming.framed(EtcdProtobufWire.watchCreate(range, startRevision: startRevision))
        var lastError: EtcdError?
        var tries = 0
        var signedInAgain = false
        while tries < endpoints.count {
            current = memberHealth.choice(among: endpoints, from: current)
            let endpoint = endpoints[current]
            do {
                try authenticator.signIn(at: endpoint, timeout: signInTimeout)
                try stream(transfer, endpoint, body, shouldStop, onEvents)
                return
            } catch {
                // etcd cancels a watch whose token went stale before it sends any event: sign
                // in again and watch once more from the same start.
                if !signedInAgain, authenticator.isStaleToken(error.message), !shouldStop() {
                    signedInAgain = true
                    authenticator.forget()
                    continue
                }
                tries += 1
                current = memberHealth.next(among: endpoints, after: current)
                guard error.code == .unreachable, !shouldStop() else { throw error }
                lastError = error
            }
        }
        throw lastError ?? EtcdError(.unreachable, "no endpoint", endpoint: "")
    }

    /// One stream from one endpoint, driven through a curl multi handle so `shouldStop` is asked
    /// every ``pollInterval`` ms whatever the stream does.
    private func stream(
        _ transfer: CurlTransfer, _ endpoint: String, _ body: [UInt8], _ shouldStop: () -> Bool,
        _ onEvents: ([EtcdWatchEvent], Int64) -> Bool
    ) throws(EtcdError) {
        guard let multi = curl_multi_init() else {
            throw EtcdError(.unreachable, "libcurl could not make a multi handle", endpoint: endpoint)
        }
        transfer.prepareStream(endpoint: endpoint, method: "/etcdserverpb.Watch/Watch", body: body)
        curl_multi_add_handle(multi, transfer.handle)
        defer {
            curl_multi_remove_handle(multi, transfer.handle)
            curl_multi_cleanup(multi)
        }
        var splitter = GRPCMessageSplitter()
        var answered = false
        var finished = false
        let started = ContinuousClock.now
        while !finished, !shouldStop() {
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            if !transfer.exchange.received.isEmpty {
                answered = true
                let messages: [ArraySlice<UInt8>]
                do {
                    messages = try splitter.append(transfer.exchange.received)
                } catch {
                    throw EtcdError(
                        .badResponse, "the watch stream is not gRPC messages (\(error))", endpoint: endpoint)
                }
                transfer.exchange.clearReceived()
                for message in messages {
                    guard try handle(message, endpoint, onEvents) else { return }
                }
            }
            if running == 0 {
                finished = true
                break
            }
            if !answered, ContinuousClock.now - started > answerTimeout {
                memberHealth.recordSilence(endpoint)
                throw EtcdError(
                    .unreachable, "no answer to the watch within \(answerTimeout) (the member hangs?)",
                    endpoint: endpoint)
            }
            curl_multi_poll(multi, nil, 0, Self.pollInterval, nil)
        }
        if !finished { return }  // stopped by shouldStop
        let outcome = transfer.outcome(result(multi))
        memberHealth.record(outcome, of: endpoint)
        if outcome.result != CURLE_OK {
            let code: EtcdError.Code =
                answered ? .outcomeUnknown : EtcdClassification.transport(outcome, .read)
            throw EtcdError(
                code == .rejected ? .rejected : (code == .unreachable ? .unreachable : .outcomeUnknown),
                "the watch stream broke: \(outcome.errorText)", endpoint: endpoint)
        }
        if let refusal = EtcdClassification.notGRPC(outcome, "watch", endpoint: endpoint) { throw refusal }
        if let status = outcome.grpcStatus, status != 0 {
            // A refusal (no leader, a stale token) or a stream etcd broke off.
            throw EtcdError(
                EtcdClassification.grpc(code: status, message: outcome.grpcMessage, .read),
                "etcd ended the watch: \(outcome.grpcMessage.isEmpty ? "gRPC status \(status)" : outcome.grpcMessage)",
                endpoint: endpoint)
        }
        throw EtcdError(
            .outcomeUnknown,
            "the watch stream ended without a reason (HTTP \(outcome.status), gRPC status \(outcome.grpcStatus.map(String.init) ?? "none"))",
            endpoint: endpoint)
    }

    private func result(_ multi: UnsafeMutableRawPointer) -> CURLcode {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_OK
    }

    /// Reads one answer of the stream; false when `onEvents` asked to stop.
    private func handle(
        _ message: ArraySlice<UInt8>, _ endpoint: String, _ onEvents: ([EtcdWatchEvent], Int64) -> Bool
    ) throws(EtcdError) -> Bool {
        let response: EtcdWatchResponse
        do {
            response = try EtcdProtobufWire.watchResponse(message)
        } catch {
            throw EtcdError(.badResponse, error.message, endpoint: endpoint)
        }
        if response.canceled {
            if response.compactRevision > 0 {
                throw EtcdError(
                    .compacted, "the start revision was compacted", endpoint: endpoint,
                    compactRevision: response.compactRevision)
            }
            let reason = response.cancelReason
            let (code, message) = EtcdClassification.cancelReason(reason)
            throw EtcdError(
                EtcdClassification.grpc(code: code, message: message, .read),
                "etcd canceled the watch: \(reason.isEmpty ? "no reason given" : reason)",
                endpoint: endpoint)
        }
        // The `created` answer and progress notifications have no events.
        if response.events.isEmpty { return true }
        return onEvents(response.events, response.revision)
    }
}
