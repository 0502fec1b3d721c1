import CountriesCore
import Etcd
import Foundation
import Synchronization
import SystemSupport

/// Follows a replicated store's event log in etcd on a thread of its own and hands the events,
/// in seq order and each once, to the service loop, which publishes them: so every replica
/// publishes every change, whichever replica committed it, with the same seq and body
/// (docs/HA.md, "Publishing").
///
/// It reads the kept events after the last one it handed over, then watches the log from the
/// revision of that read; when the watch ends (a member lost, or the leader with the
/// `hasleader` requirement), skips a seq, or is told to ``restart()``, it starts again from a
/// read, so nothing is lost.
final class EventTail: Sendable {
    /// An event as committed, with the bytes to publish.
    struct Entry: Sendable {
        var event: Event
        var body: Data
    }

    /// Readable when events are waiting in ``drain()``.
    var fileDescriptor: Int32 { outbox.fileDescriptor }

    private let endpoints: [String]
    private let layout: EtcdLayout
    private let logger: Logger
    private let requestTimeout: Duration
    private let security: EtcdSecurity
    private let outbox: WakeupQueue<Entry>
    private let stopping = Atomic<Bool>(false)
    private let restarting = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let startSeq: UInt64
    private let health: ClusterHealth
    /// The store's seed rows: what a reset's marker in the log stands for (``EtcdResetMarker``).
    private let seedRows: [IndexedCountry]

    /// A tail that will hand over the events after `seq`, recording in `health` a value in the
    /// log that it cannot hand over; a reset's marker is handed over as the reset to `seed`.
    init(
        configuration: EtcdConfiguration, after seq: UInt64, seed: [Country], health: ClusterHealth,
        logger: Logger
    ) throws(SignalPipeError) {
        self.health = health
        seedRows = CountriesState(countries: seed).rows
        endpoints = configuration.endpoints
        layout = EtcdLayout(prefix: configuration.prefix)
        requestTimeout = configuration.requestTimeout
        security = configuration.security
        self.logger = logger
        startSeq = seq
        outbox = try WakeupQueue()
    }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in
            follow()
            finished.signal()
        }
        thread.name = "etcd event tail"
        thread.start()
    }

    /// Stops the thread and waits for it (at most about a request timeout).
    func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }

    /// The events handed over since the last call, in seq order.
    func drain() -> [Entry] { outbox.drain() }

    /// Ends the current watch and follows the log again from a read: for a watch that went
    /// silent without an error (a connection cut without a word, which TCP may take minutes to
    /// notice), found out because etcd's seq is ahead of what the tail handed over.
    func restart() {
        restarting.store(true, ordering: .relaxed)
    }

    private var isStopping: Bool { stopping.load(ordering: .relaxed) }

    private func follow() {
        let client = EtcdClient(endpoints: endpoints, timeout: requestTimeout, security: security)
        let watcher = EtcdWatcher(endpoints: endpoints, security: security)
        var handedOver = startSeq
        var failures = 0
        while !isStopping {
            do {
                let revision = try readKept(after: &handedOver, client: client)
                try watcher.watch(
                    EtcdRangeRequest.prefix(layout.eventsPrefix), startRevision: revision + 1,
                    shouldStop: {
                        self.isStopping || self.restarting.exchange(false, ordering: .relaxed)
                    },
                    onEvents: { changes, _ in
                        var entries: [Entry] = []
                        defer { outbox.post(entries) }
                        for change in changes where change.kind == .put {
                            guard let seq = layout.seq(ofEventKey: change.kv.key), seq > handedOver else {
                                continue
                            }
                            // A seq skipped means the watch missed one: read again from the log.
                            guard seq == handedOver + 1 else { return false }
                            // A value that is not its event: read again, which waits on it.
                            guard let entry = decode(change.kv, seq: seq) else { return false }
                            entries.append(entry)
                            handedOver = seq
                        }
                        return true
                    })
                failures = 0
            } catch {
                failures += 1
                // Once per outage, not once per retry.
                if failures == 1 {
                    logger.log(.warning, "following the event log in etcd: \(error); retrying")
                }
                pause(.milliseconds(min(1_000, 100 * failures)))
            }
        }
    }

    /// Hands over the kept events after `handedOver` and returns the revision they were read at.
    private func readKept(after handedOver: inout UInt64, client: EtcdClient) throws(EtcdError) -> Int64 {
        var revision: Int64 = 0
        while true {
            let request = EtcdRangeRequest.from(
                layout.event(handedOver + 1), toPrefixEnd: layout.eventsPrefix, limit: 500, revision: revision
            )
            let page = try client.range(request)
            revision = page.revision
            var entries: [Entry] = []
            for kv in page.kvs {
                guard let seq = layout.seq(ofEventKey: kv.key), seq > handedOver else { continue }
                if seq != handedOver + 1 {
                    logger.log(
                        .warning,
                        "events \(handedOver + 1) to \(seq - 1) are no longer kept in etcd; publishing from \(seq) (subscribers take a fresh list)"
                    )
                }
                guard let entry = decode(kv, seq: seq) else {
                    // Never skipped: what comes after it would be published as if it were there.
                    outbox.post(entries)
                    throw EtcdError(
                        .badResponse, "the log is damaged at \(kv.key)", endpoint: client.currentEndpoint)
                }
                entries.append(entry)
                handedOver = seq
            }
            outbox.post(entries)
            if !page.more {
                health.recordLogReadable()
                return revision
            }
        }
    }

    /// The entry for the event at `seq`; nil, with the damage recorded and logged once, when the
    /// value is not that event.
    private func decode(_ kv: EtcdKeyValue, seq: UInt64) -> Entry? {
        guard let (event, body) = layout.entry(in: kv, seedRows: seedRows) else {
            let description = EtcdLayout.damage(
                at: kv,
                "this replica publishes nothing after seq \(seq - 1) until it is rewritten (docs/HA.md)")
            if health.damage == nil { logger.log(.error, description) }
            health.recordDamage(description)
            return nil
        }
        return Entry(event: event, body: body)
    }

    /// Sleeps, waking early to stop.
    private func pause(_ duration: Duration) {
        let end = ContinuousClock.now + duration
        while !isStopping && ContinuousClock.now < end {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
