import Foundation
import JSON

/// An etcd lease: keys put with it are deleted when it ends (revoked, or not kept alive for its
/// TTL). What `client/v3/concurrency`'s session holds.
public struct EtcdLease: Equatable, Sendable {
    /// etcd's id of the lease.
    public var id: Int64
    /// The seconds it lives without a keep-alive, as etcd granted it.
    public var ttlSeconds: Int64

    /// A lease with this id and TTL.
    public init(id: Int64, ttlSeconds: Int64) {
        self.id = id
        self.ttlSeconds = ttlSeconds
    }
}

extension EtcdClient {
    /// Grants a lease of `ttlSeconds` (`/v3/lease/grant`). A write: sent to one endpoint only,
    /// unless nothing could be sent to it (a lease granted but never heard of expires alone).
    public func grantLease(ttlSeconds: Int64) throws(EtcdError) -> EtcdLease {
        let body = JSONValue.object(["TTL": EtcdWire.int64(ttlSeconds)])
        let (fields, endpoint) = try call("/v3/lease/grant", body, .write, requireLeader: true)
        do throws(EtcdWire.Malformed) {
            let id = try EtcdWire.int64(fields, "ID")
            let ttl = try EtcdWire.int64(fields, "TTL")
            guard id != 0, ttl > 0 else {
                throw EtcdWire.Malformed("the lease grant has no id or TTL: \(fields)")
            }
            return EtcdLease(id: id, ttlSeconds: ttl)
        } catch {
            throw EtcdError(.badResponse, error.message, endpoint: endpoint)
        }
    }

    /// Renews the lease once (`/v3/lease/keepalive`, a stream of one request through the
    /// gateway): the seconds it now has, 0 when etcd no longer has it (expired or revoked).
    public func keepAlive(_ lease: Int64) throws(EtcdError) -> Int64 {
        let body = JSONValue.object(["ID": EtcdWire.int64(lease)])
        // A renewal is safe to send again: it only moves the lease's deadline.
        let (fields, endpoint) = try call("/v3/lease/keepalive", body, .read, requireLeader: true)
        // A stream's answer wraps each message in `result`, or says `error` with status 200.
        if let (code, message) = EtcdWire.errorAnswer(fields) {
            throw EtcdError(
                EtcdClassification.grpc(code: code, message: message, .read), message, endpoint: endpoint)
        }
        do throws(EtcdWire.Malformed) {
            return max(0, try EtcdWire.int64(try EtcdWire.object(fields, "result"), "TTL"))
        } catch {
            throw EtcdError(.badResponse, error.message, endpoint: endpoint)
        }
    }

    /// Revokes the lease (`/v3/lease/revoke`): etcd deletes its keys at once. A lease etcd no
    /// longer has is not an error.
    public func revokeLease(_ lease: Int64) throws(EtcdError) {
        let body = JSONValue.object(["ID": EtcdWire.int64(lease)])
        do {
            _ = try call("/v3/lease/revoke", body, .write, requireLeader: true)
        } catch  where error.code == .rejected && error.message.contains("not found") {
            return
        }
    }
}
