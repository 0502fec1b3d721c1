import Etcd
import Foundation
import LoadGeneration
import SystemSupport

/// `--etcd-shapes URLS [SECONDS]`: what etcd itself takes for the transactions a replica's
/// commit could send (docs/BENCHMARKS.md, "Stop 46"), measured with the project's `Etcd` client
/// as the replicas use it, while two watch streams follow the keys as two replicas' event tails
/// do. Each measurement writes under a prefix of its own and deletes it after. Run it on a
/// cluster nothing else uses (`scripts/cluster up`, then `scripts/cluster kill r1` and `r2`):
/// the CPU it reports is that of every process named `etcd` on this machine.
enum EtcdShapes {
    /// A commit's transaction.
    enum Shape: String {
        /// As replicas commit: the seq and the store compared; the seq, the batch's entry of
        /// events and its id log entry put; four reads for when a compare fails.
        case commit
        /// As `commit`, each remembered id 50 bytes instead of 180 (a reply kept as a marker
        /// rather than in full): what the id log's bytes cost etcd (docs/BENCHMARKS.md, "Stop 64").
        case leanIDs = "lean-ids"
        /// The same without the seq key, fenced instead by no entry at the next seq and the
        /// last entry's mod revision: one put fewer.
        case unsequenced
        /// The bench's etcd floor: one key compared and put, nothing else, and no watch.
        case floor
        /// The floor's transaction followed by two watch streams, as a replicated service's
        /// replicas follow its log: what the watching costs etcd (docs/BENCHMARKS.md, "Stop 64").
        case floorWatched = "floor-watched"

        /// How many watch streams follow the keys: a replica's two event tails, none for the
        /// bare floor.
        var watchers: Int { self == .floor ? 0 : 2 }

        /// What the watch streams follow under a measurement's prefix: the writers' events, as
        /// the event tails do (before stop 64 they followed every key, the seq and the id log
        /// too), or the floor's one key.
        var watched: String { self == .floorWatched ? "" : "events/" }

        /// The bytes of each remembered id in the id log's entry: an id, its canonical request
        /// and its reply at about the service's sizes, or with the reply as a marker.
        var rememberedIDBytes: Int { self == .leanIDs ? 50 : 180 }
    }

    /// One measurement: `clients` writers at once, each on a store of its own, `changes` per
    /// transaction.
    struct Setting {
        var shape: Shape
        var clients: Int
        var changes: Int
    }

    /// What to compare: the id log's bytes and the seq key's put (whole batches, and one change),
    /// two half batches in flight against one whole batch at a time, and a commit of one change
    /// against the floor, bare and watched.
    static let settings = [
        Setting(shape: .commit, clients: 1, changes: 16),
        Setting(shape: .leanIDs, clients: 1, changes: 16),
        Setting(shape: .unsequenced, clients: 1, changes: 16),
        Setting(shape: .commit, clients: 2, changes: 8),
        Setting(shape: .commit, clients: 1, changes: 1),
        Setting(shape: .unsequenced, clients: 1, changes: 1),
        Setting(shape: .floor, clients: 1, changes: 1),
        Setting(shape: .floorWatched, clients: 1, changes: 1),
    ]

    /// Measures every setting `rounds` times, `seconds` each (and at least one transaction per
    /// writer), and prints a line per measurement.
    static func run(endpoints: [String], seconds: Double, rounds: Int = 3) -> Never {
        print("shape          clients  changes/txn  txn/s  changes/s  txn p50 µs  etcd CPU µs/change  failed")
        var failed = false
        for _ in 0..<rounds {
            for setting in settings {
                let measured = measure(setting, endpoints: endpoints, seconds: seconds)
                let cpu =
                    measured.etcdCPU.map { String(format: "%.0f", $0 / Double(max(1, measured.changes))) }
                    ?? "?"
                print(
                    setting.shape.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)
                        + String(
                            format: " %7d  %11d  %5.0f  %9.0f  %10.0f  ", setting.clients, setting.changes,
                            Double(measured.transactions) / measured.seconds,
                            Double(measured.changes) / measured.seconds,
                            measured.p50Microseconds)
                        + String(repeating: " ", count: max(0, 18 - cpu.count)) + cpu
                        + String(format: "  %6d", measured.failures))
                failed = failed || measured.failures > 0
            }
        }
        exit(failed ? 1 : 0)
    }

    private struct Measured {
        var transactions = 0
        var changes = 0
        var failures = 0
        /// Each transaction's time, in ns of the monotonic clock.
        var latencies: [UInt64] = []
        var p50Microseconds: Double { latencies.isEmpty ? 0 : Percentiles(nanos: latencies).p50 }
        /// From the start of the writing to its end: at least the measurement's time, more when
        /// a writer's first transaction ends after it (a loaded machine), so rates stay rates.
        /// Set by `measure` once the writers are done.
        var seconds = 0.0
        var etcdCPU: Double?
    }

    private static func measure(_ setting: Setting, endpoints: [String], seconds: Double) -> Measured {
        let prefix = "/countries-bench-shapes/\(UUID().uuidString)/"
        let stopWatching = Locked(false)
        let watching = DispatchGroup()
        for preferred in 0..<setting.shape.watchers {
            watching.enter()
            Thread.detachNewThread {
                defer { watching.leave() }
                let watcher = EtcdWatcher(endpoints: endpoints, preferred: preferred + 1)
                try? watcher.watch(
                    .prefix(prefix + setting.shape.watched), startRevision: 0,
                    shouldStop: { stopWatching.current }
                ) {
                    _, _ in
                    true
                }
            }
        }
        let before = etcdCPUMicroseconds()
        let started = nowNanos()
        let deadline = started + UInt64(seconds * 1e9)
        let total = Locked(Measured())
        let writing = DispatchGroup()
        for index in 0..<setting.clients {
            writing.enter()
            Thread.detachNewThread {
                defer { writing.leave() }
                let measured = write(
                    setting, under: "\(prefix)\(index)/", events: "\(prefix)events/\(index)/",
                    endpoints: endpoints, until: deadline)
                total.withLock {
                    $0.transactions += measured.transactions
                    $0.changes += measured.changes
                    $0.failures += measured.failures
                    $0.latencies += measured.latencies
                }
            }
        }
        writing.wait()
        var result = total.current
        result.seconds = Double(nowNanos() - started) / 1e9
        if let before, let after = etcdCPUMicroseconds() { result.etcdCPU = after - before }
        stopWatching.withLock { $0 = true }
        watching.wait()
        let client = EtcdClient(endpoints: endpoints, timeout: .seconds(5))
        _ = try? client.txn(
            compare: [],
            success: [.deleteRange(key: prefix, rangeEnd: EtcdRangeRequest.prefixEnd(prefix))], failure: [])
        // The delete is one large transaction: let etcd write it before the next measurement.
        Thread.sleep(forTimeInterval: 1)
        return result
    }

    /// One writer's transactions until `deadline`, each on the state the last one left; at
    /// least one, however long its store's set-up took (on a loaded machine a measurement of a
    /// fifth of a second could end before its first transaction, and report nothing). Its keys
    /// are under `prefix`, its events under `eventsPrefix`, where the watch streams follow them.
    private static func write(
        _ setting: Setting, under prefix: String, events eventsPrefix: String, endpoints: [String],
        until deadline: UInt64
    )
        -> Measured
    {
        let client = EtcdClient(endpoints: endpoints, timeout: .seconds(5))
        let store = Data("bench-\(prefix)".utf8)
        var measured = Measured()
        do {
            _ = try client.txn(
                compare: [], success: [.put(prefix + "seq", Data("0".utf8)), .put(prefix + "store", store)],
                failure: [])
        } catch {
            measured.failures += 1
            return measured
        }
        func key(_ seq: UInt64) -> String { String(format: "%020llu", seq) }
        // A change's event and its remembered request, at about the service's sizes.
        let event = Data(repeating: UInt8(ascii: "e"), count: 150)
        let remembered = Data(repeating: UInt8(ascii: "i"), count: setting.shape.rememberedIDBytes)
        var seq: UInt64 = 0
        var lastEntry: (seq: UInt64, revision: Int64)?
        repeat {
            let first = seq + 1
            let last = seq + UInt64(setting.changes)
            let events = Data((0..<setting.changes).map { _ in event }.joined(separator: [0x0A]))
            let ids = Data("0\n".utf8) + Data((0..<setting.changes).map { _ in remembered + [0x0A] }.joined())
            let entries = [
                EtcdOperation.put(eventsPrefix + key(first), events),
                .put(prefix + "idlog/" + key(first), ids),
            ]
            var compare: [EtcdCompare] = [.value(prefix + "store", equals: store)]
            var success = entries
            var failure: [EtcdOperation] = [
                .range(EtcdRangeRequest(key: prefix + "store")),
                .range(.from(eventsPrefix + key(first), toPrefixEnd: eventsPrefix, limit: 100)),
                .range(EtcdRangeRequest(key: prefix + "generation")),
                .range(.from(prefix + "idlog/" + key(first), toPrefixEnd: prefix + "idlog/", limit: 64)),
            ]
            switch setting.shape {
            case .floor, .floorWatched:
                compare = [.value(prefix + "seq", equals: Data(String(seq).utf8))]
                success = [.put(prefix + "seq", Data(String(last).utf8))]
                failure = []
            case .commit, .leanIDs:
                compare.append(.value(prefix + "seq", equals: Data(String(seq).utf8)))
                success.insert(.put(prefix + "seq", Data(String(last).utf8)), at: 0)
            case .unsequenced:
                compare.append(.createRevision(eventsPrefix + key(first), equals: 0))
                if let lastEntry {
                    compare.append(
                        .modRevision(eventsPrefix + key(lastEntry.seq), equals: lastEntry.revision))
                }
            }
            let began = nowNanos()
            do {
                let result = try client.txn(compare: compare, success: success, failure: failure)
                measured.latencies.append(nowNanos() - began)
                guard result.succeeded else {
                    measured.failures += 1
                    return measured
                }
                measured.transactions += 1
                measured.changes += setting.changes
                lastEntry = (first, result.revision)
                seq = last
            } catch {
                measured.failures += 1
                return measured
            }
        } while nowNanos() < deadline
        return measured
    }

    /// The CPU time of every process named `etcd` on this machine so far, in µs.
    private static func etcdCPUMicroseconds() -> Double? {
        guard let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        var total = 0.0
        for entry in pids {
            guard let pid = pid_t(entry),
                let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                name.trimmingCharacters(in: .whitespacesAndNewlines) == "etcd",
                let cpu = Child.cpuMicroseconds(ofProcess: pid)
            else { continue }
            total += cpu
        }
        return total
    }
}
