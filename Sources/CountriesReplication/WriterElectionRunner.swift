import CountriesCore
import Etcd
import Foundation
import SystemSupport

/// Runs this replica's part of the ``WriterElection`` on a thread of its own, with its own etcd
/// connection: grants the lease, puts the key, renews the lease and reads the writer as the
/// machine says, and revokes the lease on a clean stop so another replica takes over at once
/// (docs/HA.md, "Commits"). The service asks ``role()`` for each batch.
public final class WriterElectionRunner: Sendable {
    /// The TTL asked for the lease: how long a writer that stops answering keeps the others
    /// forwarding to it (they commit themselves as soon as its connection drops).
    static let leaseSeconds: Int64 = 2

    private let election: Locked<WriterElection>
    private let endpoints: [String]
    private let security: EtcdSecurity
    private let requestTimeout: Duration
    /// The replica's record of members that stopped answering, shared by all its connections.
    private let memberHealth: EtcdMemberHealth
    private let layout: EtcdLayout
    private let logger: Logger
    private let worker = WorkerThread(name: "writer election")

    /// A runner for the replica whose command endpoint (the one others forward to) is `endpoint`.
    public init(
        configuration: EtcdConfiguration, endpoint: String, memberHealth: EtcdMemberHealth, logger: Logger
    ) {
        election = Locked(WriterElection(endpoint: endpoint))
        self.memberHealth = memberHealth
        endpoints = configuration.endpoints
        security = configuration.security
        requestTimeout = configuration.requestTimeout
        layout = EtcdLayout(prefix: configuration.prefix)
        self.logger = logger
    }

    /// What this replica is now.
    public func role() -> WriterElection.Role {
        let now = ContinuousClock.now
        return election.withLock { $0.role(now: now) }
    }

    /// Starts the thread.
    public func start() {
        worker.start { [self] in run() }
    }

    /// Stops the thread, revokes the lease (its key goes with it) and waits, at most about a
    /// request timeout or two.
    public func stop() {
        worker.stop()
    }

    private var isStopping: Bool { worker.isStopping }

    private func run() {
        let client = EtcdClient(
            endpoints: endpoints, timeout: requestTimeout, security: security, memberHealth: memberHealth)
        var lastRole = WriterElection.Role.unknown
        var failing = false
        // The last key whose endpoint was refused, so that it is named once, not at every read.
        var refusedKey: String?
        while !isStopping {
            let now = ContinuousClock.now
            let step = election.withLock { $0.nextStep(now: now) }
            if let failure = perform(step, client: client, now: now) {
                // Logged once per outage, not at every try.
                if !failing { logger.log(.warning, "writer election: \(failure); trying again") }
                failing = true
                worker.pause(for: .milliseconds(200))
            } else if failing, step == .grantLease || step.isCampaign {
                logger.log(.info, "writer election: etcd answers again")
                failing = false
            }
            if let writer = election.withLock({ $0.writer }),
                !WriterElection.isForwardingEndpoint(writer.endpoint),
                writer.key != refusedKey
            {
                refusedKey = writer.key
                logger.log(
                    .warning,
                    "the writer election key \(VisibleText.escaped(writer.key)) names \(VisibleText.escaped(String(writer.endpoint.prefix(80)))) (\(writer.endpoint.utf8.count) bytes), no replica's command endpoint (tcp:// or ipc://, at most 512 bytes): not forwarding to it, this replica commits its own changes; remove the key and check who can write to etcd (docs/SECURITY.md)"
                )
            }
            let role = self.role()
            if role != lastRole {
                logger.log(.info, "writer election: \(Self.describe(role))")
                lastRole = role
            }
        }
        if let lease = election.withLock({ $0.lease }) {
            do {
                try client.revokeLease(lease)
                logger.log(.info, "writer election: lease revoked, another replica takes over")
            } catch {
                logger.log(.warning, "could not revoke the writer lease (it expires by itself): \(error)")
            }
        }
    }

    /// Does `step`; what failed, for a grant or a campaign that etcd did not take.
    private func perform(_ step: WriterElection.Step, client: EtcdClient, now: ContinuousClock.Instant)
        -> String?
    {
        switch step {
        case .grantLease:
            do {
                let lease = try client.grantLease(ttlSeconds: Self.leaseSeconds)
                election.withLock { $0.granted(lease: lease.id, ttlSeconds: lease.ttlSeconds, sentAt: now) }
            } catch {
                return "granting a writer lease failed: \(error)"
            }
        case .campaign(let lease):
            do {
                let (key, revision) = try campaign(lease: lease, client: client)
                election.withLock { $0.campaigned(key: key, createRevision: revision) }
            } catch {
                return "putting the writer election key failed: \(error)"
            }
        case .renew(let lease):
            do {
                let ttl = try client.keepAlive(lease)
                election.withLock { $0.renewed(ttlSeconds: ttl, sentAt: now) }
                if ttl == 0 { logger.log(.warning, "the writer lease expired; campaigning again") }
            } catch {
                election.withLock { $0.renewalFailed(now: .now) }
            }
        case .readWriter:
            do {
                let found = try client.range(
                    .prefix(layout.writerPrefix, limit: 1, sortTarget: .createRevision, sortOrder: .ascending)
                )
                let writer = found.kvs.first.map {
                    WriterElection.Writer(
                        key: $0.key, endpoint: String(decoding: $0.value, as: UTF8.self),
                        createRevision: $0.createRevision)
                }
                election.withLock { $0.read(writer: writer, now: .now) }
            } catch {
                election.withLock { $0.readFailed(now: .now) }
            }
        case .wait(let until):
            worker.pause(for: until - ContinuousClock.now)
        }
        return nil
    }

    /// Puts this replica's key (`writer/<lease in hex>`, its endpoint, with the lease) unless it
    /// is there already, as `Election.Campaign` does; the key and its create revision.
    private func campaign(lease: Int64, client: EtcdClient) throws(EtcdError) -> (String, Int64) {
        let key = layout.writerPrefix + String(UInt64(bitPattern: lease), radix: 16)
        let endpoint = election.withLock { $0.endpoint }
        let result = try client.txn(
            compare: [.createRevision(key, equals: 0)],
            success: [.putLeased(key, Data(endpoint.utf8), lease: lease)],
            failure: [.range(EtcdRangeRequest(key: key))])
        if result.succeeded { return (key, result.revision) }
        guard case .range(let range)? = result.results.first, let kv = range.kvs.first else {
            throw EtcdError(.badResponse, "the election key \(key) is neither new nor there", endpoint: "")
        }
        return (key, kv.createRevision)
    }

    static func describe(_ role: WriterElection.Role) -> String {
        switch role {
        case .writer: return "this replica is the writer"
        case .follower(let endpoint): return "the writer is \(endpoint); changes are forwarded to it"
        case .unknown: return "no writer known; this replica commits its own changes"
        }
    }
}

extension WriterElection.Step {
    /// Whether the step puts this replica's key.
    var isCampaign: Bool {
        if case .campaign = self { return true }
        return false
    }
}

extension EtcdLayout {
    /// Where the replicas' election keys live (`writer/<lease in hex>`, each its replica's
    /// command endpoint, with its lease): the lowest create revision is the writer's.
    var writerPrefix: String { prefix + "writer/" }
}
