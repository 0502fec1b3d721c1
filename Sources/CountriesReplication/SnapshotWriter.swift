import CountriesCore
import Etcd
import Foundation
import SystemSupport

/// Writes the replicated store's snapshot (``EtcdBlob``, in chunks) on a thread and an etcd
/// connection of its own, so a commit that crosses a multiple of ``EtcdStore/snapshotInterval``
/// never holds the service loop: the largest list is 12 to 45 chunk transactions, seconds on a
/// busy etcd, while other clients' changes and forwarded requests wait on that loop.
///
/// Only the newest state handed over is written: one still waiting when a newer one comes is
/// dropped, since the newer snapshot stands for it. Writes start at most every ``spacing``.
/// ``knownSeq`` is the newest snapshot this writer saw in etcd or wrote, which the commits'
/// trimming keeps events after.
final class SnapshotWriter: Sendable {
    private struct Work {
        var pending: CountriesState?
        var busy = false
        var known: UInt64 = 0
    }

    private let configuration: EtcdConfiguration
    private let layout: EtcdLayout
    private let identity: String
    private let health: ClusterHealth
    private let logger: Logger
    private let work = Locked(Work())
    private let wake = DispatchSemaphore(value: 0)
    private let worker = WorkerThread(name: "etcd snapshots")

    /// The least time from one write's start to the next's. Every 100 seqs at thousands of
    /// changes a second made the snapshot's three requests a sizeable share of etcd's
    /// (docs/BENCHMARKS.md, "Stop 40"); a start then reads at most about a second of events
    /// past the snapshot, besides the 100.
    static let spacing: Duration = .seconds(1)
    private let minimumSpacing: Duration

    /// Starts the thread; ``stop()`` ends it. Writes start `spacing` apart at least.
    init(
        configuration: EtcdConfiguration, identity: String, health: ClusterHealth, logger: Logger,
        spacing: Duration = SnapshotWriter.spacing
    ) {
        self.configuration = configuration
        minimumSpacing = spacing
        layout = EtcdLayout(prefix: configuration.prefix)
        self.identity = identity
        self.health = health
        self.logger = logger
        worker.start { [self] in run() }
    }

    /// The seq of the newest snapshot written or found in etcd by this writer (0: none).
    var knownSeq: UInt64 { work.withLock { $0.known } }

    /// Hands `state` over to be written as the snapshot, in place of any still waiting.
    func submit(_ state: CountriesState) {
        work.withLock { $0.pending = state }
        wake.signal()
    }

    /// Waits until nothing is waiting or being written, at most `limit` (for tests); whether it
    /// is idle. (A write handed over after ``stop()`` is never made.)
    func waitUntilIdle(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while work.withLock({ $0.pending != nil || $0.busy }) {
            guard ContinuousClock.now < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }

    /// Ends the thread after the write in hand, if any, and waits for it.
    func stop() {
        worker.stop(wake: { wake.signal() })
    }

    private func run() {
        let client = EtcdClient(
            endpoints: configuration.endpoints, timeout: configuration.requestTimeout,
            security: configuration.security, memberHealth: health.members)
        while true {
            wake.wait()
            if worker.isStopping { return }
            while let state = work.withLock({ work -> CountriesState? in
                defer { work.pending = nil }
                work.busy = work.pending != nil
                return work.pending
            }) {
                let started = ContinuousClock.now
                let written = write(state, client: client)
                work.withLock {
                    $0.busy = false
                    if let written { $0.known = max($0.known, written) }
                }
                // A newer state handed over meanwhile waits, and only the newest is written.
                if !worker.pause(for: started + minimumSpacing - .now) { return }
            }
        }
    }

    /// Writes `state` unless a snapshot as new is there; the seq of the snapshot now known, or
    /// nil when the write failed (logged: the changes are committed, and a later commit hands
    /// over a newer state).
    private func write(_ state: CountriesState, client: EtcdClient) -> UInt64? {
        let blob = layout.snapshotBlob
        do {
            // The pointer as it is now (a store from before chunks: the snapshot itself, read
            // once); its mod revision is what the switch compares.
            let head = try client.range(EtcdRangeRequest(key: layout.snapshot))
            var expected: Int64 = 0
            if let kv = head.kvs.first {
                expected = kv.modRevision
                if let pointer = EtcdBlob.Pointer(kv.value), pointer.seq >= state.seq { return pointer.seq }
            }
            let value = Event(seq: state.seq, kind: .reset(state.rows), store: identity).encoded()
            // Only into the store it is of: across a restore of etcd (which keeps revisions, so
            // the pointer's may still compare equal) it was another store's snapshot, at a seq of
            // a history the new store never had.
            return try blob.replace(
                expected: expected, with: value, seq: state.seq,
                conditions: [.value(layout.store, equals: Data(identity.utf8))], client: client)
                ? state.seq : nil
        } catch {
            EtcdStore.noteNoSpace(
                EtcdStore.storeError(error, during: "snapshot"), health: health, logger: logger)
            logger.log(
                .warning,
                "writing the snapshot at seq \(state.seq) failed (\(error)); the changes are committed, and the next commit past a multiple of \(EtcdStore.snapshotInterval) writes it again"
            )
            return nil
        }
    }
}
