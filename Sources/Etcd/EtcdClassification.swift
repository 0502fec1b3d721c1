import CCurl
import JSON

/// Which ``EtcdError/Code`` each failure becomes: what etcd's answer or libcurl's failure proves
/// about the operation. The table is in docs/ARCHITECTURE.md (the etcd client).
enum EtcdClassification {
    /// A read can be sent again anywhere; a write (a txn) only when it certainly did not happen.
    enum Kind {
        case read
        case write
    }

    /// A transfer that got no HTTP answer.
    static func transport(_ outcome: CurlTransfer.Outcome, _ kind: Kind) -> EtcdError.Code {
        switch outcome.result {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: return .rejected
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            // A certificate or key that does not fit: trying again cannot help, the files must
            // change. (The TLS handshake comes before any byte of the body.)
            return .rejected
        default:
            // No byte of the body left: etcd cannot have acted on it, whatever failed.
            return outcome.bodySent ? .outcomeUnknown : .unreachable
        }
    }

    /// An answer with gRPC `code` (https://grpc.github.io/grpc/core/md_doc_statuscodes.html) and
    /// etcd's `message`.
    static func grpc(code: Int64, message: String, _ kind: Kind) -> EtcdError.Code {
        // Refused before any proposal: the require-leader check (hasleader) and a proposal raft
        // dropped for want of a leader.
        if message.contains("no leader") || message.contains("raft proposal dropped") { return .noQuorum }
        switch code {
        case 11 where message.contains("compacted"):
            return .compacted
        case 8 where message.contains("too many requests"):
            // The member's apply backlog, checked before it proposes: try again, elsewhere.
            return .noQuorum
        case 3, 5, 6, 7, 8, 9, 11, 12, 16:
            // InvalidArgument (too many ops, too large, bad key), NotFound, AlreadyExists,
            // PermissionDenied, ResourceExhausted, FailedPrecondition, OutOfRange (future
            // revision), Unimplemented, Unauthenticated: refused, nothing done.
            return .rejected
        default:
            // Unavailable ("request timed out", "leader changed", "connection lost"),
            // DeadlineExceeded, Canceled, Unknown, Internal...: a write may have been proposed.
            return kind == .write ? .outcomeUnknown : .noQuorum
        }
    }

    /// gRPC's status codes by the names Go's `status` writes (`codes.Code.String()`).
    private static let codeNames: [String: Int64] = [
        "OK": 0, "Canceled": 1, "Unknown": 2, "InvalidArgument": 3, "DeadlineExceeded": 4, "NotFound": 5,
        "AlreadyExists": 6, "PermissionDenied": 7, "ResourceExhausted": 8, "FailedPrecondition": 9,
        "Aborted": 10, "OutOfRange": 11, "Unimplemented": 12, "Internal": 13, "Unavailable": 14,
        "DataLoss": 15, "Unauthenticated": 16,
    ]

    /// The gRPC code and message of a watch's `cancel_reason`: etcd writes a refusal there as Go
    /// prints a status error (`rpc error: code = PermissionDenied desc = etcdserver: permission
    /// denied`); anything else is taken for Unavailable (14), as a stream that broke off.
    static func cancelReason(_ reason: String) -> (code: Int64, message: String) {
        let prefix = "rpc error: code = "
        guard reason.hasPrefix(prefix), let separator = reason.range(of: " desc = ") else {
            return (14, reason)
        }
        let name = String(
            reason[reason.index(reason.startIndex, offsetBy: prefix.count)..<separator.lowerBound])
        guard let code = codeNames[name] else { return (14, reason) }
        return (code, String(reason[separator.upperBound...]))
    }

    /// The fields of a call's answer, or the error its transfer, status or body comes to: one
    /// reading of every answer, for the calls and for signing in.
    static func answer(_ outcome: CurlTransfer.Outcome, _ kind: Kind, endpoint: String) throws(EtcdError)
        -> [String: JSONValue]
    {
        guard outcome.result == CURLE_OK else {
            throw EtcdError(transport(outcome, kind), outcome.errorText, endpoint: endpoint)
        }
        let fields: [String: JSONValue]
        do {
            fields = try EtcdWire.parse(outcome.body)
        } catch {
            throw EtcdError(
                kind == .write ? .outcomeUnknown : .badResponse,
                "HTTP \(outcome.status), \(error.message)", endpoint: endpoint)
        }
        if outcome.status != 200 {
            guard let (code, message) = EtcdWire.errorAnswer(fields) else {
                throw EtcdError(
                    kind == .write ? .outcomeUnknown : .badResponse,
                    "HTTP \(outcome.status) without an error: \(EtcdWire.preview(outcome.body))",
                    endpoint: endpoint)
            }
            throw EtcdError(grpc(code: code, message: message, kind), message, endpoint: endpoint)
        }
        return fields
    }

    /// The refusal an answer over HTTP/1.1 to a gRPC `call` (or stream) is, nil for one over
    /// HTTP/2: gRPC is HTTP/2 only, so etcd's HTTP/1 handlers answered, and they have no such call.
    static func notGRPC(_ outcome: CurlTransfer.Outcome, _ call: String, endpoint: String) -> EtcdError? {
        guard outcome.httpMajorVersion == 1 else { return nil }
        return EtcdError(
            .rejected,
            "HTTP \(outcome.status) over HTTP/1.1 to a gRPC \(call): is this etcd's client URL? \(EtcdWire.preview(outcome.body))",
            endpoint: endpoint)
    }

    /// The message of a gRPC call's answer, or the error its transfer or `grpc-status` comes to:
    /// etcd's code and message are the ones the gateway would have put in its JSON.
    static func grpcAnswer(_ outcome: CurlTransfer.Outcome, _ kind: Kind, endpoint: String) throws(EtcdError)
        -> ArraySlice<UInt8>
    {
        guard outcome.result == CURLE_OK else {
            throw EtcdError(transport(outcome, kind), outcome.errorText, endpoint: endpoint)
        }
        if let refusal = notGRPC(outcome, "call", endpoint: endpoint) { throw refusal }
        let unclear: EtcdError.Code = kind == .write ? .outcomeUnknown : .badResponse
        guard let status = outcome.grpcStatus, status >= 0 else {
            throw EtcdError(
                unclear, "HTTP \(outcome.status) without a gRPC status: \(EtcdWire.preview(outcome.body))",
                endpoint: endpoint)
        }
        guard status == 0 else {
            throw EtcdError(
                grpc(code: status, message: outcome.grpcMessage, kind), outcome.grpcMessage,
                endpoint: endpoint)
        }
        do {
            return try GRPCFraming.message(in: outcome.body)
        } catch {
            throw EtcdError(unclear, error.message, endpoint: endpoint)
        }
    }
}
