import CountriesCore
import CountriesReplication
import Metrics

/// What `/metrics` and `/readyz` say of a service (docs/OPERATIONS.md): a snapshot the service
/// loop publishes on a ``MetricsBoard``. The status fields are the very ``ServiceStatus`` a
/// `status` request gets, made by the same function, so the two never disagree.
public struct ServiceMetrics: MetricsSnapshot {
    /// Answers by op and code since start.
    var requests: [AnswerTally.RequestCount: UInt64] = [:]
    /// How long each commit took, in seconds.
    var commitSeconds = Histogram(upperBounds: ServiceMetrics.secondsBuckets)
    /// How many changes each commit held.
    var commitChanges = Histogram(upperBounds: ServiceMetrics.changesBuckets)
    /// The state's seq.
    var seq: UInt64 = 0
    /// What `status` reports.
    var status = ServiceStatus()
    /// Bytes of replies handed to libzmq and not yet taken by their peers.
    var repliesQueuedBytes = 0
    /// Command peers with such replies.
    var repliesQueuedPeers = 0
    /// Why a change would be refused now (the store's own say), or nil.
    public var unreadiness: String?
    /// A replica's changes passed to the elected writer since start; nil on a single service.
    var forwardedChanges: UInt64?
    /// Request ids the store forgot younger than the age floor
    /// (``StateStore/requestIDsForgottenYoung``).
    var requestIDsForgottenYoung = 0

    /// Commit latencies: 0.5 ms (a memory store) to 5 s (an etcd cluster losing a member).
    static let secondsBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
    /// Changes per commit, up to a full batch.
    static let changesBuckets: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]

    /// The exposition of this snapshot.
    public var metrics: MetricsText {
        var text = MetricsText()
        text.declare(
            "countries_requests_total",
            help: "Requests answered, by op and by outcome (ok or the error code).",
            kind: .counter)
        for (key, count) in requests {
            text.counter(
                "countries_requests_total", help: "", labels: ["op": key.op, "code": key.code], Double(count))
        }
        text.histogram(
            "countries_commit_duration_seconds", help: "Time each commit to the store took.", commitSeconds)
        text.histogram(
            "countries_commit_changes", help: "Changes committed together in one commit (group commit).",
            commitChanges)
        text.gauge("countries_seq", help: "The seq of the last committed change.", Double(seq))
        text.counter(
            "countries_request_ids_forgotten_young_total",
            help:
                "Request ids of changes forgotten younger than 10 minutes, the ids' memory being full: "
                + "a retry of one would be applied again.",
            Double(requestIDsForgottenYoung))
        text.gauge(
            "countries_ready", help: "1 when the service can commit a change now (as /readyz), else 0.",
            unreadiness == nil ? 1 : 0)
        text.gauge(
            "countries_replies_queued_bytes",
            help: "Bytes of replies sent and not yet taken by their clients.",
            Double(repliesQueuedBytes))
        text.gauge(
            "countries_replies_queued_peers", help: "Command clients with replies not yet taken.",
            Double(repliesQueuedPeers))
        if let uptime = status.uptimeMilliseconds {
            text.gauge(
                "countries_uptime_seconds", help: "Seconds since the service started.", Double(uptime) / 1000)
        }
        if let subscribers = status.subscribers {
            text.gauge(
                "countries_subscribers", help: "Connections on the event endpoint (subscribers and relays).",
                Double(subscribers))
        }
        if let bytes = status.storeBytes {
            text.gauge("countries_store_bytes", help: "Size of the store on disk.", Double(bytes))
        }
        if let visited = status.visited {
            text.gauge("countries_visited", help: "Countries marked visited.", Double(visited))
        }
        replicated(into: &text)
        return text
    }

    /// The replicated mode's gauges (docs/HA.md): only a service on etcd has them.
    private func replicated(into text: inout MetricsText) {
        if let quorum = status.etcdQuorum {
            text.gauge(
                "countries_etcd_quorum", help: "1 when this replica reaches a quorum of etcd, else 0.",
                quorum == "yes" ? 1 : 0)
        }
        if let writer = status.writer {
            text.gauge(
                "countries_writer", help: "1 when this replica is the elected writer, else 0.",
                writer == ServiceStatus.thisReplica ? 1 : 0)
        }
        if let forwardedChanges {
            text.counter(
                "countries_forwarded_changes_total",
                help: "Changes this replica passed to the elected writer, each a hop its client could spare.",
                Double(forwardedChanges))
        }
        if let members = status.etcdMembers {
            text.gauge("countries_etcd_members", help: "Members of the etcd cluster.", Double(members.count))
        }
        if let leader = status.etcdLeader {
            text.gauge(
                "countries_etcd_leader",
                help: "1, labelled with the etcd member that leads (none: no leader; unknown: no quorum).",
                labels: ["leader": leader], 1)
        }
        if status.etcdQuorum != nil {
            text.gauge(
                "countries_store_damaged", help: "1 when a value in the event log in etcd does not decode.",
                status.storeDamage == nil ? 0 : 1)
            text.gauge(
                "countries_etcd_no_space",
                help: "1 when etcd refuses writes for want of space (alarm NOSPACE).",
                status.etcdSpace == nil ? 0 : 1)
        }
        if let lag = status.publicationLagMilliseconds {
            text.gauge(
                "countries_publication_lag_seconds",
                help: "How long the oldest change committed and not yet published has waited.",
                Double(lag) / 1000)
        }
    }
}
