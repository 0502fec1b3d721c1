/// Where a subscriber's replica stands with the service: the one word for it from the
/// subscription machine to the screen and the web page.
public enum SubscriptionPhase: Equatable, Sendable {
    /// No snapshot yet: there is nothing to show but skeleton rows.
    case connecting
    /// The replica has every change the service is known to have made.
    case live
    /// The replica may be behind; the text says why, for the screen (e.g. "no heartbeat for
    /// 3 s", "missed events 13-15", "service restarted").
    case stale(String)
}
