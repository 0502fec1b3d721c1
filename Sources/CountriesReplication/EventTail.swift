import CountriesCore
import Etcd
import Foundation
import SystemSupport

/// Follows a replicated store's event log in etcd on a thread of its own and hands the events,
/// in seq order and each once, to the service loop, which publishes them: so every replica
/// publishes every change, whichever replica committed it, with the same seq and body
/// (docs/HA.md, "Publishing").
///
/// Each key of the log is one commit's entry of events (``EtcdLayout/entries(in:seedRows:)``),
/// and the tail hands over whole entries, so the next event it waits for starts one. It reads
/// the kept events after the last one it handed over, then watches the log from the
/// revision of that read; when the watch ends (a member lost, or the leader with the
/// `hasleader` requirement) or skips a seq, it starts again from a read, so nothing is lost.
/// It watches through a member of its own (``preferredMember(_:among:)``), and leaves it for
/// another when another connection of the replica found it silent, or when a seq the replica
/// knows is committed waits there ``PublicationWatchdog/tailLeavesAfter``: a member that hangs
/// keeps the watch open without a word.
public final class EventTail: Sendable {
    /// An event as committed, with the bytes to publish.
    public struct Entry: Sendable {
        /// The event.
        public var event: Event
        /// Its encoding, as committed.
        public var body: [UInt8]
    }

    /// Readable when events are waiting in ``drain()``.
    public var fileDescriptor: Int32 { outbox.fileDescriptor }

    private let endpoints: [String]
    private let layout: EtcdLayout
    private let logger: Logger
    private let requestTimeout: Duration
    private let security: EtcdSecurity
    private let outbox: WakeupQueue<Entry>
    /// The bytes of the bodies handed over and not yet drained.
    private let queued = Locked(0)
    /// Most bytes of bodies waiting in ``drain()`` before the tail stops reading the log until
    /// the service takes them (``maximumQueuedBytes`` unless given).
    let queuedBytesLimit: Int
    private let worker = WorkerThread(name: "etcd tail")
    private let startSeq: UInt64
    private let health: ClusterHealth
    /// The store's seed rows: what a reset's marker in the log stands for (``EtcdResetMarker``).
    private let seedRows: [IndexedCountry]
    /// The index of the member the watch goes to first.
    private let preferred: Int

    /// A tail that will hand over the events after `seq`, recording in `health` a value in the
    /// log that it cannot hand over; a reset's marker is handed over as the reset to `seed`.
    public init(
        configuration: EtcdConfiguration, after seq: UInt64, seed: [Country], health: ClusterHealth,
        logger: Logger, queuedBytesLimit: Int = EventTail.maximumQueuedBytes
    ) throws(SignalPipeError) {
        self.queuedBytesLimit = queuedBytesLimit
        self.health = health
        seedRows = CountriesState(countries: seed).rows
        endpoints = configuration.endpoints
        layout = EtcdLayout(prefix: configuration.prefix)
        requestTimeout = configuration.requestTimeout
        security = configuration.security
        self.logger = logger
        startSeq = seq
        preferred = Self.preferredMember(configuration.replicaName, among: configuration.endpoints.count)
        outbox = try WakeupQueue()
    }

    /// The member a replica called `name` watches through first: the sum of its name's bytes,
    /// modulo the number of members, so names that differ in one character (`r1`, `r2`, `r3`)
    /// watch through different members, and one hung member does not hold every replica's tail.
    static func preferredMember(_ name: String, among count: Int) -> Int {
        guard count > 0 else { return 0 }
        return name.utf8.reduce(0) { ($0 + Int($1)) % count }
    }

    /// Starts the thread.
    public func start() {
        worker.start { [self] in follow() }
    }

    /// Stops the thread and waits for it (at most about a request timeout).
    public func stop() {
        worker.stop()
    }

    /// Most bytes of event bodies handed over and not drained: past it the tail waits for the
    /// service's loop before it reads on (etcd keeps the rest). Above the largest event (a
    /// reset of the largest list, about 16 MB), so one always fits.
    public static let maximumQueuedBytes = 64 << 20

    /// The bytes of event bodies handed over and not yet drained.
    public var queuedBytes: Int { queued.withLock { $0 } }

    /// The events handed over since the last call, in seq order.
    public func drain() -> [Entry] {
        let entries = outbox.drain()
        let bytes = entries.reduce(0) { $0 + $1.body.count }
        queued.withLock { $0 -= bytes }
        return entries
    }

    /// Hands `entries` to the service's loop, then, while more than ``queuedBytesLimit`` wait
    /// there (its loop is busy), waits for it to take them, or for a stop: a loop that stalls
    /// holds at most that much of the tail's reading, not the whole log.
    private func handOver(_ entries: [Entry]) {
        guard !entries.isEmpty else { return }
        let bytes = entries.reduce(0) { $0 + $1.body.count }
        queued.withLock { $0 += bytes }
        outbox.post(entries)
        while queuedBytes > queuedBytesLimit, worker.pause(for: .milliseconds(10)) {}
    }

    private var isStopping: Bool { worker.isStopping }

    private func follow() {
        let client = EtcdClient(
            endpoints: endpoints, timeout: requestTimeout, security: security, memberHealth: health.members)
        let watcher = EtcdWatcher(
            endpoints: endpoints, preferred: preferred, security: security, memberHealth: health.members)
        var handedOver = startSeq
        var failures = 0
        var leaves = 0
        while !isStopping {
            do {
                let revision = try readKept(after: &handedOver, client: client)
                var silent = false
                try watcher.watch(
                    EtcdRangeRequest.prefix(layout.eventsPrefix), startRevision: revision + 1,
                    shouldStop: {
                        if self.isStopping || watcher.isOnAvoidedMember { return true }
                        silent =
                            self.health.publicationLag(after: handedOver)
                            >= PublicationWatchdog.tailLeavesAfter
                        return silent
                    },
                    onEvents: { changes, _ in
                        var entries: [Entry] = []
                        defer { handOver(entries) }
                        for change in changes where change.kind == .put {
                            guard let seq = layout.seq(ofEventKey: change.kv.key), seq > handedOver else {
                                continue
                            }
                            // A seq skipped means the watch missed one: read again from the log.
                            guard seq == handedOver + 1 else { return false }
                            // A value that is not its events: read again, which waits on it.
                            guard let decoded = decode(change.kv, seq: seq) else { return false }
                            entries += decoded
                            handedOver = decoded.last?.event.seq ?? handedOver
                        }
                        return true
                    })
                if silent {
                    leave(watcher.currentEndpoint, handedOver: handedOver)
                    leaves += 1
                    // Once at once; again only after a pause. A lag no member ends (a seq known
                    // committed whose events never come: a `seq` key raised by hand) made each
                    // new watch leave at its first look, a range, a watch and a warning as fast
                    // as etcd answered.
                    if leaves > 1 { worker.pause(for: .milliseconds(min(1_000, 100 * (leaves - 1)))) }
                } else if !isStopping, watcher.isOnAvoidedMember {
                    logger.log(
                        .info,
                        "another connection found \(watcher.currentEndpoint) silent; following the event log through another member"
                    )
                }
                failures = 0
                if !silent { leaves = 0 }
            } catch {
                failures += 1
                // Once per outage, not once per retry.
                if failures == 1 {
                    logger.log(.warning, "following the event log in etcd: \(error); retrying")
                }
                worker.pause(for: .milliseconds(min(1_000, 100 * failures)))
            }
        }
    }

    /// A watch let a seq known committed wait too long: its member hangs, or the connection
    /// was cut without a word. Every connection of the replica avoids the member until it
    /// answers a recheck; the tail reads from another.
    private func leave(_ endpoint: String, handedOver: UInt64) {
        health.members.recordSilence(endpoint)
        let waited = Double(health.publicationLag(after: handedOver) / .milliseconds(1)) / 1000
        logger.log(
            .warning,
            "the watch at \(endpoint) delivered nothing after seq \(handedOver) for \(String(format: "%.1f", waited)) s while a later seq is committed; reading the event log from another member"
        )
    }

    /// Hands over the kept events after `handedOver` and returns the revision they were read at,
    /// after which the watch goes on.
    private func readKept(after handedOver: inout UInt64, client: EtcdClient) throws(EtcdError) -> Int64 {
        // The committed seq, at the revision the log is then read at (a commit puts both in one
        // transaction): an entry keyed past it was never committed. Anyone who can write under
        // the prefix could put one; taken as a gap of trimmed events, it was published, and
        // every later commit, at or below it, was dropped as handed over already.
        let head = try client.range(EtcdRangeRequest(key: layout.seq))
        return try readLog(
            after: &handedOver, committed: try? layout.seqValue(in: head), at: head.revision, client: client)
    }

    /// Hands over the events after `handedOver` the log held at `revision`, when the committed
    /// seq was `committed`, and returns `revision`: the watch goes on after it. (A page's own
    /// revision is etcd's newest; the watch started after it missed every commit made since the
    /// seq was read, until a later commit showed the gap or the watchdog took the member for
    /// hung.)
    func readLog(
        after handedOver: inout UInt64, committed: UInt64?, at revision: Int64, client: EtcdClient
    ) throws(EtcdError) -> Int64 {
        // Every page at that revision, each from just after the last key of the one before: a
        // key skipped (not a seq's) still moves the read on.
        var request: EtcdRangeRequest? = EtcdRangeRequest.from(
            layout.event(handedOver + 1), toPrefixEnd: layout.eventsPrefix, limit: 500, revision: revision)
        while let current = request {
            let page = try client.range(current)
            var entries: [Entry] = []
            for kv in page.kvs {
                guard let seq = layout.seq(ofEventKey: kv.key), seq > handedOver else { continue }
                let pastCommitted = committed.map { seq > $0 } ?? false
                if seq != handedOver + 1, !pastCommitted {
                    logger.log(
                        .warning,
                        "events \(handedOver + 1) to \(seq - 1) are no longer kept in etcd; publishing from \(seq) (subscribers take a fresh list)"
                    )
                }
                guard let decoded = decode(kv, seq: seq) else {
                    // Never skipped: what comes after it would be published as if it were there.
                    handOver(entries)
                    throw EtcdError(
                        .badResponse, "the log is damaged at \(kv.key)", endpoint: client.currentEndpoint)
                }
                if let committed, pastCommitted {
                    // Its events, never committed: not published. (A value that is not its
                    // events is damage above, wherever it is, until a commit overwrites it.)
                    // Every key after it is past the committed seq too (canonical keys sort as
                    // their seqs), so the read ends here.
                    logger.log(
                        .warning,
                        "the event log holds entries from \(kv.key) on, past the committed seq \(committed): never committed, not published (remove them; docs/HA.md)"
                    )
                    handOver(entries)
                    health.recordLogReadable()
                    return revision
                }
                entries += decoded
                handedOver = decoded.last?.event.seq ?? handedOver
            }
            handOver(entries)
            // Stopping: whoever starts a tail again reads the rest.
            if isStopping { return revision }
            request = current.next(after: page)
        }
        health.recordLogReadable()
        return revision
    }

    /// The events of the log's entry at `seq`; nil, with the damage recorded and logged once,
    /// when the value is not those events.
    private func decode(_ kv: EtcdKeyValue, seq: UInt64) -> [Entry]? {
        guard let decoded = layout.entries(in: kv, seedRows: seedRows) else {
            let description = EtcdLayout.damage(
                at: kv,
                "this replica publishes nothing after seq \(seq - 1) until it is rewritten (docs/HA.md)")
            if health.damage == nil { logger.log(.error, description) }
            health.recordDamage(description)
            return nil
        }
        return decoded.map { Entry(event: $0.event, body: Array($0.body)) }
    }
}
