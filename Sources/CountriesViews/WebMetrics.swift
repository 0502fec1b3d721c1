import Metrics

/// What `countries web` answers on `/metrics` and `/readyz` (docs/OPERATIONS.md): a snapshot its
/// loop publishes on every turn, so the HTTP threads never touch the loop's model.
public struct WebMetrics: MetricsSnapshot {
    /// Whether the replica has every change (the pages say `live`).
    var live = false
    /// The state line the pages show.
    var stateLine = "stale: connecting to the service"
    /// The replica's seq, once there is one.
    var seq: UInt64?
    /// Pages with an open event stream.
    var pages = 0
    /// Toggles answered, by HTTP status.
    var toggles: [Int: UInt64] = [:]
    /// Requests refused before they were served (400, 401, 403), by HTTP status.
    var refusals: [Int: UInt64] = [:]

    /// Not ready while the table is not live: a toggle would be refused.
    public var unreadiness: String? { live ? nil : "the table is \(stateLine)" }

    /// The exposition of this snapshot.
    public var metrics: MetricsText {
        var text = MetricsText()
        text.gauge(
            "countries_ready", help: "1 when the table is live (as /readyz), else 0.", live ? 1 : 0)
        if let seq {
            text.gauge("countries_seq", help: "The seq of the replica the pages show.", Double(seq))
        }
        text.gauge(
            "countries_web_pages", help: "Pages with an open event stream.", Double(pages))
        text.declare(
            "countries_web_toggles_total", help: "Toggles from pages answered, by HTTP status.",
            kind: .counter)
        for (status, count) in toggles.sorted(by: { $0.key < $1.key }) {
            text.counter(
                "countries_web_toggles_total", help: "", labels: ["status": "\(status)"], Double(count))
        }
        text.declare(
            "countries_web_refused_total",
            help: "Requests refused before they were served (Host, origin, token), by HTTP status.",
            kind: .counter)
        for (status, count) in refusals.sorted(by: { $0.key < $1.key }) {
            text.counter(
                "countries_web_refused_total", help: "", labels: ["status": "\(status)"], Double(count))
        }
        return text
    }
}
