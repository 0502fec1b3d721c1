import Foundation
import JSON

/// A client of an etcd v3 cluster: transactions over etcd's gRPC API, everything else through its
/// JSON gateway, each on a libcurl handle reused call after call (keep-alive), used from one
/// thread (it is not `Sendable`). Transactions are the hot path, and decoding a transaction's JSON
/// cost etcd more CPU than raft's own loop (docs/ARCHITECTURE.md, the etcd client).
///
/// It tries the endpoints in turn: it keeps using the one that last worked and moves to the next
/// on `unreachable`, `outcomeUnknown` or `noQuorum`. A read (range, member list) is sent again
/// to the next endpoints until `timeout` is spent; a txn only when nothing was sent
/// (`unreachable`), never after it may have reached etcd. Txns and linearizable ranges carry
/// etcd's require-leader header, so a member without a leader refuses at once (`noQuorum`)
/// instead of proposing or waiting; serializable ranges, the member list and status do not,
/// so they still answer from a member cut off from the others.
///
/// A member that gave no answer in time is recorded in the ``EtcdMemberHealth`` the client
/// shares with the process's other connections, and every call of theirs goes elsewhere until
/// it answers a recheck (``recheckAvoided(_:timeout:)``).
public final class EtcdClient {
    /// The endpoints, as given (`http://host:port`; a bare `host:port` gets `http://`).
    public let endpoints: [String]
    /// The endpoint the next call goes to first: the one that last answered.
    public var currentEndpoint: String { endpoints.isEmpty ? "" : endpoints[current] }
    /// The longest a call takes, endpoints tried included.
    public let timeout: Duration

    /// Which members stopped answering, shared with the process's other connections.
    public let memberHealth: EtcdMemberHealth

    private var current = 0
    private let transfer: CurlTransfer?
    /// Transactions' connection: gRPC over HTTP/2.
    private let grpcTransfer: CurlTransfer?
    private let authenticator: EtcdAuthenticator?

    /// A client for the cluster at `endpoints`, with `security`'s TLS files and user; connects
    /// (and signs in) on the first call. It avoids the members `memberHealth` records as silent.
    public init(
        endpoints: [String], timeout: Duration = .seconds(1), connectTimeout: Duration = .milliseconds(300),
        security: EtcdSecurity = EtcdSecurity(), memberHealth: EtcdMemberHealth = EtcdMemberHealth()
    ) {
        self.endpoints = endpoints.map(Self.normalized)
        self.timeout = timeout
        self.memberHealth = memberHealth
        let transfer = CurlTransfer(connectTimeout: connectTimeout, headers: [], security: security)
        let grpcTransfer = CurlTransfer(
            connectTimeout: connectTimeout, headers: [], security: security, wire: .grpc)
        self.transfer = transfer
        self.grpcTransfer = grpcTransfer
        authenticator = transfer.map {
            EtcdAuthenticator(user: security.user, transfer: $0, others: grpcTransfer.map { [$0] } ?? [])
        }
    }

    static func normalized(_ endpoint: String) -> String {
        var text = endpoint
        while text.hasSuffix("/") { text.removeLast() }
        return text.contains("://") ? text : "http://" + text
    }

    /// Reads a range of keys (linearizable unless the request is `serializable`).
    public func range(_ request: EtcdRangeRequest) throws(EtcdError) -> EtcdRangeResponse {
        let (fields, endpoint) = try call(
            "/v3/kv/range", encoded: EtcdWire.range(request), .read, requireLeader: !request.serializable)
        return try decoded(endpoint, .read) { () throws(EtcdWire.Malformed) in
            try EtcdWire.rangeResponse(fields)
        }
    }

    /// Runs a txn: when every compare holds, the `success` operations, else the `failure` ones,
    /// atomically. Sent to one endpoint only, unless nothing could be sent to it.
    public func txn(
        compare: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation]
    ) throws(EtcdError) -> EtcdTxnResponse {
        try txn(EtcdEncodedTxn(compare: compare, success: success, failure: failure))
    }

    /// Sends a transaction encoded before (to budget its size, ``EtcdEncodedTxn/byteCount``).
    public func txn(_ encoded: EtcdEncodedTxn) throws(EtcdError) -> EtcdTxnResponse {
        let (message, endpoint) = try call(.write) { endpoint, limit throws(EtcdError) in
            try grpcAttempt(
                endpoint, "/etcdserverpb.KV/Txn", encoded.body, .write, requireLeader: true, limit)
        }
        return try decoded(endpoint, .write) { () throws(EtcdWire.Malformed) in
            try EtcdProtobufWire.txnResponse(message)
        }
    }

    /// The cluster's members, as the member answering knows them.
    public func members() throws(EtcdError) -> [EtcdMember] {
        let (fields, endpoint) = try call(
            "/v3/cluster/member/list", .object([:]), .read, requireLeader: false)
        return try decoded(endpoint, .read) { () throws(EtcdWire.Malformed) in try EtcdWire.members(fields) }
    }

    /// One member's status, asked of that endpoint alone (not necessarily one of `endpoints`).
    public func status(of endpoint: String) throws(EtcdError) -> EtcdMemberStatus {
        let endpoint = Self.normalized(endpoint)
        let fields = try attempt(
            endpoint, "/v3/maintenance/status", EtcdWire.encoded(.object([:])), .read, false, timeout)
        return try decoded(endpoint, .read) { () throws(EtcdWire.Malformed) in
            try EtcdWire.status(fields, endpoint: endpoint)
        }
    }

    /// Sends `request` (a linearizable range) to each member ``memberHealth`` avoids and has not
    /// tried for its recheck interval, at most `timeout` each: one that answers is used again.
    public func recheckAvoided(_ request: EtcdRangeRequest, timeout: Duration) {
        let body = EtcdWire.range(request)
        for endpoint in memberHealth.dueForRecheck(among: endpoints) {
            _ = try? attempt(endpoint, "/v3/kv/range", body, .read, true, timeout)
        }
    }

    // MARK: Calls

    /// Sends `body` to `path` at the current endpoint, and on to the next ones as the class of
    /// call allows, until one answers or `timeout` is spent (the lease calls use it too).
    func call(
        _ path: String, _ body: JSONValue, _ kind: EtcdClassification.Kind, requireLeader: Bool
    ) throws(EtcdError) -> ([String: JSONValue], String) {
        try call(path, encoded: EtcdWire.encoded(body), kind, requireLeader: requireLeader)
    }

    /// ``call(_:_:_:requireLeader:)`` with the body encoded already.
    private func call(
        _ path: String, encoded bytes: [UInt8], _ kind: EtcdClassification.Kind, requireLeader: Bool
    ) throws(EtcdError) -> ([String: JSONValue], String) {
        try call(kind) { endpoint, limit throws(EtcdError) in
            try attempt(endpoint, path, bytes, kind, requireLeader, limit)
        }
    }

    /// Runs `attempt` (one call to one endpoint, at most the time it is given) at the current
    /// endpoint, and on to the next ones as `kind` allows, until one answers or `timeout` is
    /// spent: its answer and the endpoint that gave it.
    private func call<Answer>(
        _ kind: EtcdClassification.Kind, _ attempt: (String, Duration) throws(EtcdError) -> Answer
    ) throws(EtcdError) -> (Answer, String) {
        guard !endpoints.isEmpty else {
            throw EtcdError(.rejected, "no etcd endpoint was given", endpoint: "")
        }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        // A read leaves time for another endpoint when one hangs (a member cut off from the
        // others takes a read and holds it); a txn has the whole timeout, it is sent once.
        let share = kind == .read && endpoints.count > 1 ? timeout / 2 : timeout
        var tries = 0
        current = memberHealth.choice(among: endpoints, from: current)
        while true {
            let endpoint = endpoints[current]
            do {
                let limit = min(share, deadline - clock.now)
                return (try attempt(endpoint, limit), endpoint)
            } catch {
                tries += 1
                let moves =
                    error.code == .unreachable || error.code == .outcomeUnknown || error.code == .noQuorum
                if moves { current = memberHealth.next(among: endpoints, after: current) }
                let again =
                    kind == .read ? moves : (error.code == .unreachable && tries < endpoints.count)
                guard again else { throw error }
                // Every endpoint failed fast (refused, no leader): a pause, not a busy loop.
                if tries % endpoints.count == 0 {
                    Thread.sleep(forTimeInterval: min(0.05, max(0, (deadline - clock.now).seconds)))
                }
                // Too little time left for an answer: this error says more than a timeout would.
                guard deadline - clock.now > .milliseconds(20) else { throw error }
            }
        }
    }

    /// One POST to one endpoint's gateway, its answer's object or the error it comes to.
    private func attempt(
        _ endpoint: String, _ path: String, _ body: [UInt8], _ kind: EtcdClassification.Kind,
        _ requireLeader: Bool, _ timeout: Duration
    ) throws(EtcdError) -> [String: JSONValue] {
        try signedIn(endpoint, timeout, transfer) { transfer throws(EtcdError) in
            let outcome = transfer.post(
                url: endpoint + path, body: body, requireLeader: requireLeader, timeout: timeout)
            memberHealth.record(outcome, of: endpoint)
            return try EtcdClassification.answer(outcome, kind, endpoint: endpoint)
        }
    }

    /// One gRPC call (`method`, the framed message `body`) to one endpoint, its answer's message
    /// or the error it comes to.
    private func grpcAttempt(
        _ endpoint: String, _ method: String, _ body: [UInt8], _ kind: EtcdClassification.Kind,
        requireLeader: Bool, _ timeout: Duration
    ) throws(EtcdError) -> ArraySlice<UInt8> {
        try signedIn(endpoint, timeout, grpcTransfer) { transfer throws(EtcdError) in
            let outcome = transfer.grpcCall(
                endpoint: endpoint, method: method, body: body, requireLeader: requireLeader, timeout: timeout
            )
            memberHealth.record(outcome, of: endpoint)
            return try EtcdClassification.grpcAnswer(outcome, kind, endpoint: endpoint)
        }
    }

    /// Runs `post` on `transfer` once signed in at `endpoint`, and once more after signing in
    /// again when etcd says the token is stale.
    private func signedIn<Answer>(
        _ endpoint: String, _ timeout: Duration, _ transfer: CurlTransfer?,
        _ post: (CurlTransfer) throws(EtcdError) -> Answer
    ) throws(EtcdError) -> Answer {
        guard let transfer, let authenticator else {
            throw EtcdError(.unreachable, "libcurl could not make a handle", endpoint: endpoint)
        }
        var signedInAgain = false
        while true {
            do {
                try authenticator.signIn(at: endpoint, timeout: timeout)
                return try post(transfer)
            } catch {
                // A stale token was refused before anything was proposed: sign in, send once more.
                guard !signedInAgain, authenticator.isStaleToken(error.message) else { throw error }
                signedInAgain = true
                authenticator.forget()
            }
        }
    }

    /// The decoded answer, or for an answer not as documented `badResponse` (for a txn,
    /// `outcomeUnknown`: etcd said it was done, but not what it did).
    private func decoded<T>(
        _ endpoint: String, _ kind: EtcdClassification.Kind, _ decode: () throws(EtcdWire.Malformed) -> T
    ) throws(EtcdError) -> T {
        do {
            return try decode()
        } catch {
            throw EtcdError(
                kind == .write ? .outcomeUnknown : .badResponse, error.message, endpoint: endpoint)
        }
    }
}

extension Duration {
    /// The duration in seconds.
    fileprivate var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
