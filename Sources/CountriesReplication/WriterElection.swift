import CountriesCore
import Foundation

/// Which replica commits, as etcd's `client/v3/concurrency` election decides it, without etcd:
/// each replica holds a lease and, under the election prefix, a key put with that lease whose
/// value is its command endpoint; the key with the lowest create revision is the writer's. A
/// replica whose lease is gone (not renewed for its TTL, or etcd says so) is no candidate until
/// it has a new lease and a new key, which sorts after every key already there.
///
/// The election only spares replicas from competing: it is no fence. A replica that believes it
/// is the writer when it is not (paused past its TTL) commits with the seq compare as always,
/// and etcd refuses it (docs/HA.md, "Commits").
///
/// The runner (``WriterElectionRunner``) does what ``nextStep(now:)`` says and reports what
/// etcd answered; the service asks ``role(now:)`` for each batch. Times are the monotonic clock.
public struct WriterElection: Equatable {
    /// What the runner does next.
    enum Step: Equatable {
        /// Ask etcd for a lease.
        case grantLease
        /// Put this replica's key with the lease, if it is not there yet.
        case campaign(lease: Int64)
        /// Renew the lease.
        case renew(lease: Int64)
        /// Read the lowest key under the prefix.
        case readWriter
        /// Nothing until this instant.
        case wait(until: ContinuousClock.Instant)
    }

    /// What the service does with a change.
    public enum Role: Equatable {
        /// This replica is the writer: commit.
        case writer
        /// Another replica is: forward to its command endpoint.
        case follower(endpoint: String)
        /// Nobody known to be (no writer read yet, or the last read is too old): commit, as
        /// before the election; the compare keeps it safe.
        case unknown

        /// What `status` says of the role (its `writer` field): ``ServiceStatus/thisReplica``, the
        /// writer's command endpoint, or `none`.
        public var statusValue: String {
            switch self {
            case .writer: return ServiceStatus.thisReplica
            case .follower(let endpoint): return endpoint
            case .unknown: return "none"
            }
        }
    }

    /// The candidate key with the lowest create revision, as last read.
    struct Writer: Equatable {
        var key: String
        var endpoint: String
        var createRevision: Int64
    }

    /// This replica's command endpoint, its key's value.
    let endpoint: String
    /// How often the writer is read again.
    let readInterval: Duration

    private(set) var lease: Int64?
    /// Until when the lease surely lives: the sending of its last grant or renewal plus its TTL.
    private(set) var leaseDeadline: ContinuousClock.Instant?
    private var ttl: Duration = .seconds(2)
    private var nextRenewal: ContinuousClock.Instant?
    /// This replica's key under the prefix, once put with the current lease.
    private(set) var ownKey: String?
    private var ownRevision: Int64?
    /// The lowest key, and when it was read.
    private(set) var writer: Writer?
    private var writerReadAt: ContinuousClock.Instant?
    private var nextRead: ContinuousClock.Instant?

    init(endpoint: String, readInterval: Duration = .milliseconds(500)) {
        self.endpoint = endpoint
        self.readInterval = readInterval
    }

    /// The step due at `now`: a lease first, then the key, then renewals and reads as they fall
    /// due.
    func nextStep(now: ContinuousClock.Instant) -> Step {
        guard let lease, let leaseDeadline, now < leaseDeadline else { return .grantLease }
        guard ownKey != nil else { return .campaign(lease: lease) }
        if let nextRenewal, now >= nextRenewal { return .renew(lease: lease) }
        if nextRead.map({ now >= $0 }) ?? true { return .readWriter }
        return .wait(until: min(nextRenewal ?? now, nextRead ?? now))
    }

    /// etcd granted `lease` for `ttlSeconds`, asked at `sentAt`.
    mutating func granted(lease: Int64, ttlSeconds: Int64, sentAt: ContinuousClock.Instant) {
        self.lease = lease
        ownKey = nil
        ownRevision = nil
        ttl = .seconds(max(1, ttlSeconds))
        leaseDeadline = sentAt + ttl
        // Renewed three times a TTL, as etcd's own client does (a third of it).
        nextRenewal = sentAt + ttl / 3
    }

    /// This replica's key is under the prefix with the current lease, created at `createRevision`.
    mutating func campaigned(key: String, createRevision: Int64) {
        ownKey = key
        ownRevision = createRevision
        nextRead = nil  // read the writer now
    }

    /// A renewal sent at `sentAt` came back with `ttlSeconds` (0: etcd no longer has the lease,
    /// and its key is gone with it).
    mutating func renewed(ttlSeconds: Int64, sentAt: ContinuousClock.Instant) {
        guard ttlSeconds > 0 else {
            leaseGone()
            return
        }
        leaseDeadline = sentAt + .seconds(ttlSeconds)
        nextRenewal = sentAt + .seconds(ttlSeconds) / 3
    }

    /// A renewal got no answer: tried again soon; the lease lives until its deadline anyway.
    mutating func renewalFailed(now: ContinuousClock.Instant) {
        nextRenewal = now + min(readInterval, ttl / 6)
        if let leaseDeadline, now >= leaseDeadline { leaseGone() }
    }

    /// The lowest key under the prefix, read at `now` (nil: no candidate at all).
    mutating func read(writer lowest: Writer?, now: ContinuousClock.Instant) {
        writer = lowest
        writerReadAt = now
        nextRead = now + readInterval
        // Our key is not there (its lease ended in etcd before we heard): campaign again.
        guard let ownRevision else { return }
        if lowest.map({ $0.createRevision > ownRevision }) ?? true {
            leaseGone()
        }
    }

    /// A read of the writer failed at `now`: tried again at the next interval.
    mutating func readFailed(now: ContinuousClock.Instant) {
        nextRead = now + readInterval
    }

    /// The lease is gone (expired, revoked, or etcd says it does not know it): a new one, a new
    /// key.
    mutating func leaseGone() {
        lease = nil
        leaseDeadline = nil
        nextRenewal = nil
        ownKey = nil
        ownRevision = nil
    }

    /// What this replica is at `now`. The writer only while its own lease surely lives and the
    /// lowest key read is its own; a follower of the key read while that read is younger than a
    /// TTL; otherwise unknown.
    func role(now: ContinuousClock.Instant) -> Role {
        guard let writer, let writerReadAt, now - writerReadAt < ttl else { return .unknown }
        if writer.key == ownKey {
            guard let leaseDeadline, now < leaseDeadline else { return .unknown }
            return .writer
        }
        guard Self.isForwardingEndpoint(writer.endpoint) else { return .unknown }
        return writer.endpoint == endpoint ? .unknown : .follower(endpoint: writer.endpoint)
    }

    /// Whether `endpoint`, read from the writer's key, is one changes may be forwarded to: a
    /// replica's command endpoint over `tcp://` or `ipc://`, at most 512 bytes, without control
    /// characters. The key is anyone's who can write under the prefix: `inproc://` reached a
    /// socket of this very process (the ZAP handler's, `inproc://zeromq.zap.01`, connects
    /// without a handshake and answers no change, so every change was `unavailable`), and a
    /// value of a megabyte was logged at each change of role. Otherwise this replica commits its
    /// own changes (the seq fence keeps them safe).
    static func isForwardingEndpoint(_ endpoint: String) -> Bool {
        (endpoint.hasPrefix("tcp://") || endpoint.hasPrefix("ipc://")) && endpoint.utf8.count <= 512
            && !endpoint.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
