/// Paces redraws: at most one frame per ``minimumInterval`` (about 60 a second), and the last
/// state always drawn. A pure value; the event loop asks it when to draw.
///
/// Use: call ``markDirty(now:)`` whenever the state changes; wait (poll) no longer than
/// ``timeUntilDraw(now:)``; then call ``drawIfDue(now:)`` and draw when it says so. A change after
/// a quiet spell draws at once; changes during a burst are folded into one frame per interval,
/// and the frame after the burst shows the final state.
public struct FrameCoalescer<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The least time between two frames.
    public var minimumInterval: Duration
    /// When the last frame was drawn.
    public private(set) var lastDraw: Instant?
    /// Whether a change has not been drawn yet.
    public private(set) var isDirty = false

    /// Creates a coalescer; the default allows 60 frames a second.
    public init(minimumInterval: Duration = .seconds(1) / 60) {
        self.minimumInterval = minimumInterval
    }

    /// Records that the screen is out of date; returns when it should be drawn.
    @discardableResult
    public mutating func markDirty(now: Instant) -> Instant {
        isDirty = true
        return deadline(now: now) ?? now
    }

    /// When the next frame is due, or nil when nothing needs drawing.
    public func deadline(now: Instant) -> Instant? {
        guard isDirty else { return nil }
        guard let lastDraw else { return now }
        let earliest = lastDraw.advanced(by: minimumInterval)
        return earliest > now ? earliest : now
    }

    /// How long the loop may wait before drawing: nil to wait for events only, zero to draw now.
    public func timeUntilDraw(now: Instant) -> Duration? {
        guard let deadline = deadline(now: now) else { return nil }
        return now.duration(to: deadline)
    }

    /// Whether to draw now; when true, the frame counts as drawn (the loop must draw it).
    public mutating func drawIfDue(now: Instant) -> Bool {
        guard let deadline = deadline(now: now), deadline <= now else { return false }
        isDirty = false
        lastDraw = now
        return true
    }
}
