/// Logs refusals without letting a flood of them flood the log: the first few in each window
/// are written, the rest counted and summarized when the window ends.
public struct RefusalLog {
    var window: Duration = .seconds(10)
    var perWindow = 5
    /// What the summary counts: "(N more refusals not logged)".
    var noun = "refusals"
    private var windowStart: ContinuousClock.Instant?
    private var written = 0
    private var suppressed = 0

    /// At most `perWindow` lines every `window`, then one summary counting the `noun` left out.
    public init(window: Duration = .seconds(10), perWindow: Int = 5, noun: String = "refusals") {
        self.window = window
        self.perWindow = perWindow
        self.noun = noun
    }

    /// The line to log for this refusal, or nil when it is suppressed.
    public mutating func record(_ line: String, now: ContinuousClock.Instant) -> String? {
        var prefix = ""
        if let start = windowStart, now - start < window {
            guard written < perWindow else {
                suppressed += 1
                return nil
            }
        } else {
            if suppressed > 0 { prefix = "(\(suppressed) more \(noun) not logged) " }
            windowStart = now
            written = 0
            suppressed = 0
        }
        written += 1
        return prefix + line
    }
}
