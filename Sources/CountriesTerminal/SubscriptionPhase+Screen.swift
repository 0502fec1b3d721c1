import CountriesCore

// What the screen makes of the subscription's phase: the one vocabulary from the machine to the
// header (connecting, live, stale and why), with no second enum in between.
extension SubscriptionPhase {
    /// The header's phase text: `live · seq 12`, `stale: no heartbeat for 3 s`, `connecting…`.
    public func headerText(seq: UInt64, _ glyphs: Glyphs = .unicode) -> String {
        switch self {
        case .connecting: return "connecting" + glyphs.ellipsis
        case .live: return "live\(glyphs.separator)seq \(seq)"
        case .stale(let reason): return "stale: \(reason)"
        }
    }

    /// The data source for this phase: live rows only when live and a state is at hand, else a
    /// skeleton of `skeletonRows` rows (seed 002: never old data posing as live).
    public func dataSource(
        state: CountriesState?, skeletonRows: Int = 20, glyphs: Glyphs = .unicode
    ) -> any TableDataSource {
        if self == .live, let state {
            return LiveDataSource(state: state, glyphs: glyphs)
        }
        return SkeletonDataSource(rows: skeletonRows, glyphs: glyphs)
    }
}
