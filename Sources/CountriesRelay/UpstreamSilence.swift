/// Whether the relay's upstream has gone quiet, for the log: one warning once nothing came for
/// ``allowed`` (since the start, or since the last message), and one line when a message comes
/// again. Before, only `/readyz` told, and a relay without `--metrics` said nothing at all
/// while its subscribers got no events and no heartbeats.
struct UpstreamSilence {
    /// Three default heartbeats of the service (`relay --metrics` is not ready after as long).
    static let allowed: Duration = .seconds(3)

    /// The upstream, as the lines name it.
    let upstream: String
    /// When the last message came (or the relay started).
    private(set) var lastHeard: ContinuousClock.Instant
    private var said = false
    private var everHeard = false

    /// Silent since `start`, when nothing came yet.
    init(upstream: String, since start: ContinuousClock.Instant) {
        self.upstream = upstream
        lastHeard = start
    }

    /// A message came at `now`: the line to log when it ends a silence that was said.
    mutating func heard(now: ContinuousClock.Instant) -> String? {
        defer {
            lastHeard = now
            said = false
            everHeard = true
        }
        guard said else { return nil }
        return "upstream \(upstream) heard again after \((now - lastHeard).components.seconds) s"
    }

    /// The line to log when the silence has just passed ``allowed``, once per silence.
    mutating func check(now: ContinuousClock.Instant) -> String? {
        guard !said, now - lastHeard >= Self.allowed else { return nil }
        said = true
        let since = everHeard ? "for" : "in the"
        return
            "nothing received from upstream \(upstream) \(since) \(Self.allowed.components.seconds) s\(everHeard ? "" : " since the start"): subscribers get no events and no heartbeats; is the service running there (--from)?"
    }

    /// When the last message came, or nil before the first (the metrics' silence).
    var lastMessage: ContinuousClock.Instant? { everHeard ? lastHeard : nil }

    /// When ``check(now:)`` may next have a line; nil while a silence is already said.
    var nextCheck: ContinuousClock.Instant? { said ? nil : lastHeard + Self.allowed }
}
