import CCurl
import JSON

/// Signs in as an etcd user (`/v3/auth/authenticate`) and keeps the token on the transfers of one
/// client or watcher, which send it on every call. Not `Sendable`: it belongs to the client or
/// watcher that owns the transfers.
///
/// Tokens end: etcd's simple tokens expire after minutes unused and die with the member that
/// restarts; a JWT expires. A call etcd answers with a stale token was refused before anything
/// was proposed, so the owner forgets the token (``forget()``), signs in again and sends it once
/// more.
final class EtcdAuthenticator {
    /// The user to sign in as; nil: calls carry no token.
    let user: EtcdUser?
    /// Signs in; the gateway's JSON.
    private let transfer: CurlTransfer
    /// Carry the token too (the client's gRPC transfer).
    private let others: [CurlTransfer]
    /// Whether a token (or etcd's word that auth is off) was got since the last ``forget()``.
    private var signedIn = false

    /// Signs in through `transfer` (which speaks the gateway's JSON), and puts the token on it and
    /// on `others`.
    init(user: EtcdUser?, transfer: CurlTransfer, others: [CurlTransfer] = []) {
        self.user = user
        self.transfer = transfer
        self.others = others
    }

    private func setToken(_ token: String?) {
        transfer.authorization = token
        for other in others { other.authorization = token }
    }

    /// Makes sure the transfer carries a token when a user is set: authenticates at `endpoint`
    /// first when it has none. Throws `rejected` when etcd refuses the user or password.
    func signIn(at endpoint: String, timeout: Duration) throws(EtcdError) {
        guard let user, !signedIn else { return }
        setToken(nil)
        let body = EtcdWire.encoded(
            .object(["name": .string(user.name), "password": .string(user.password)]))
        let outcome = transfer.post(
            url: endpoint + "/v3/auth/authenticate", body: body, requireLeader: false, timeout: timeout)
        let fields: [String: JSONValue]
        do {
            // Authenticate is a read as far as retrying goes: it changes nothing anyone sees.
            fields = try EtcdClassification.answer(outcome, .read, endpoint: endpoint)
        } catch {
            if error.message.contains("authentication is not enabled") {
                // Nothing to prove: calls go without a token until etcd says otherwise.
                signedIn = true
                return
            }
            // Refused by etcd itself (not by the transfer): the user or its password.
            guard error.code == .rejected, outcome.result == CURLE_OK else { throw error }
            throw EtcdError(
                .rejected,
                "etcd refused to sign in \(user): \(error.message); check --etcd-user and its password",
                endpoint: endpoint)
        }
        guard case .string(let token)? = fields["token"], !token.isEmpty else {
            throw EtcdError(.badResponse, "etcd's authenticate answer has no token", endpoint: endpoint)
        }
        guard Self.canBeSent(token) else {
            throw EtcdError(
                .badResponse,
                "etcd's authenticate answer holds a token a header cannot carry (\(token.utf8.count) bytes, not all visible ASCII)",
                endpoint: endpoint)
        }
        setToken(token)
        signedIn = true
    }

    /// Whether `token` can go in a header line as it is: visible ASCII only. etcd's simple tokens
    /// and JWTs are; anything else (a line break above all) would end the header early over
    /// HTTP/1.1 and write headers of its own.
    static func canBeSent(_ token: String) -> Bool {
        token.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Drops the token, so the next ``signIn(at:timeout:)`` authenticates again.
    func forget() {
        signedIn = false
        setToken(nil)
    }

    /// Whether etcd's error `message` says the call's token is no good any more (expired, made
    /// by a member that restarted, older than a change of users or roles), so signing in again
    /// and sending the call once more is worth it. etcd refuses these before proposing anything.
    func isStaleToken(_ message: String) -> Bool {
        guard user != nil else { return false }
        return message.contains("invalid auth token") || message.contains("revision of auth store is old")
            || message.contains("user name is empty")
    }
}
