import CountriesCore
import CountriesStore
import Metrics

/// What the handler reports about the service besides its list: the reply to `status` and the
/// metrics' snapshot, both from one ``ServiceStatus`` so that a scrape and a `status` request
/// never disagree.
extension CommandHandler {
    /// The reply to `status`: the seq, the count and the store beside the service's status.
    func status() -> Reply {
        var reply = Reply(seq: state.seq, count: state.count)
        reply.store = store.identity
        reply.status = currentStatus(readsHistory: true)
        return reply
    }

    /// What the metrics say now: the same status a `status` request gets, with the counts and
    /// measures kept since start.
    func metrics() -> ServiceMetrics {
        var metrics = ServiceMetrics()
        metrics.requests = tally.requests
        if let commits {
            metrics.commitSeconds = commits.seconds
            metrics.commitChanges = commits.changes
        }
        metrics.seq = state.seq
        // Without the oldest retained seq: on etcd that is a read of the cluster, which the
        // loop makes for a `status` request but not twice a second for a scrape.
        metrics.status = currentStatus(readsHistory: false)
        metrics.unreadiness = store.unavailability ?? path.failures.unreadiness(now: .now)
        metrics.requestIDsForgottenYoung = store.requestIDsForgottenYoung
        if let unreadReplies {
            metrics.repliesQueuedBytes = unreadReplies.totalBytes
            metrics.repliesQueuedPeers = unreadReplies.peers
        }
        return metrics
    }

    /// The service's status, for `status` and the metrics alike.
    private func currentStatus(readsHistory: Bool) -> ServiceStatus {
        let info = statusInfo()
        var status = ServiceStatus()
        status.version = info.version
        status.uptimeMilliseconds = UInt64((max(0, info.uptimeSeconds) * 1000).rounded())
        status.visited = state.visitedCount
        status.commandsServed = served
        status.commandsRefused = refused
        status.storePath = store.path
        status.storeBytes = store.sizeOnDisk
        if readsHistory { status.historyFrom = try? store.oldestRetainedSeq(currentSeq: state.seq) }
        status.endpoints = info.endpoints
        status.subscribers = subscribers
        status.writer = writerStatus?()
        store.clusterStatus(into: &status)
        return status
    }
}
