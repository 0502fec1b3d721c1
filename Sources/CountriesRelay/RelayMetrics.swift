import Metrics

/// What `relay --metrics` answers (docs/OPERATIONS.md): a snapshot the relay's loop publishes
/// on a ``MetricsBoard`` at least every ``Relay/metricsInterval``.
public struct RelayMetrics: MetricsSnapshot {
    /// Messages forwarded downstream, by topic.
    var forwarded: [String: UInt64] = [:]
    /// Messages from upstream not forwarded (not the protocol's shape, or over the window).
    var dropped: UInt64 = 0
    /// Connections of subscribers (and relays) downstream.
    var subscribers = 0
    /// Seconds since the last message from upstream, or nil before the first.
    var upstreamSilenceSeconds: Double?
    /// How long the upstream may be silent before the relay is not ready: three heartbeats.
    static let silenceAllowed = Double(UpstreamSilence.allowed.components.seconds)

    /// Not ready before the first message from upstream, or after three heartbeats without one.
    public var unreadiness: String? {
        guard let silence = upstreamSilenceSeconds else { return "nothing received from upstream yet" }
        guard silence <= Self.silenceAllowed else {
            return "nothing received from upstream for \(Int(silence)) s (three default heartbeats)"
        }
        return nil
    }

    /// The exposition of this snapshot.
    public var metrics: MetricsText {
        var text = MetricsText()
        text.declare(
            "countries_relay_forwarded_total", help: "Messages forwarded downstream, by topic.",
            kind: .counter)
        for (topic, count) in forwarded {
            text.counter("countries_relay_forwarded_total", help: "", labels: ["topic": topic], Double(count))
        }
        text.counter(
            "countries_relay_dropped_total", help: "Messages from upstream not forwarded (shape, or window).",
            Double(dropped))
        text.gauge("countries_subscribers", help: "Connections on the relay's endpoint.", Double(subscribers))
        text.gauge(
            "countries_ready",
            help: "1 when upstream was heard within three heartbeats (as /readyz), else 0.",
            unreadiness == nil ? 1 : 0)
        if let silence = upstreamSilenceSeconds {
            text.gauge(
                "countries_relay_upstream_silence_seconds",
                help: "Seconds since the last message from upstream.",
                silence)
        }
        return text
    }
}
